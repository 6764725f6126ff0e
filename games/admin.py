from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.shortcuts import get_object_or_404, redirect
from django.template.response import TemplateResponse
from django.urls import path, reverse

from .models import Analysis, Game, GameEvent, Invitation, Seat
from .services import GameError, game_end


class GameEventInline(admin.TabularInline):
    model = GameEvent
    fields = ("seq", "entry", "player", "data", "created_at")
    readonly_fields = fields
    extra = 0
    can_delete = False
    ordering = ("seq",)

    def has_add_permission(self, request, obj=None) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def get_queryset(self, request):
        return super().get_queryset(request).select_related("game", "player")

    @admin.display(description="kind")
    def entry(self, event: GameEvent) -> str:
        """The entry's meaning in words: the platform's, or its game's engine's."""
        return event.get_kind_display()


class SeatInline(admin.TabularInline):
    model = Seat
    fields = ("index", "user", "rank", "clock_ms")
    readonly_fields = fields
    extra = 0
    can_delete = False
    ordering = ("index",)

    def has_add_permission(self, request, obj=None) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False


@admin.register(Game)
class GameAdmin(admin.ModelAdmin):
    list_display = (
        "public_id",
        "kind",
        "variant",
        "pool",
        "status",
        "players_shown",
        "winner",
        "ending",
        "created_at",
        "finished_at",
    )
    list_filter = ("kind", "status", "ending", "variant", "pool")
    search_fields = ("public_id", "seats__user__username")
    list_select_related = ("winner",)
    date_hierarchy = "created_at"
    inlines = [SeatInline, GameEventInline]

    def get_queryset(self, request):
        return super().get_queryset(request).prefetch_related("seats__user")

    @admin.display(description="players")
    def players_shown(self, game: Game) -> str:
        return " vs ".join(user.username for user in game.players)

    actions = ["end_player_on_turn_loses", "end_with_no_result", "analyse_again"]

    # Games change only through the game services, never by hand, so that the move log stays the truth.
    def get_readonly_fields(self, request, obj=None):
        return [field.name for field in self.model._meta.fields]

    def has_add_permission(self, request) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False

    def change_view(self, request, object_id, form_url="", extra_context=None):
        # Nothing on the page can be changed: no Save buttons (the change permission stays, for the end actions).
        context = {"show_save": False, "show_save_and_continue": False, "show_save_and_add_another": False}
        return super().change_view(request, object_id, form_url, {**context, **(extra_context or {})})

    ENDINGS = {
        "loses": (True, "End this game: the player on turn loses, and the opponent wins?"),
        "no-result": (False, "End this game with no result? It will count for no one."),
    }

    def get_urls(self):
        end = self.admin_site.admin_view(self.end_view)
        return [path("<int:object_id>/end/<str:how>/", end, name="games_game_end"), *super().get_urls()]

    def end_view(self, request, object_id: int, how: str):
        """End one game from its own page, as the list's actions do: asked first (GET), done on POST."""
        game = get_object_or_404(Game, pk=object_id)
        if how not in self.ENDINGS or not self.has_change_permission(request, game):
            raise PermissionDenied
        opponent_wins, question = self.ENDINGS[how]
        if request.method == "POST":
            self._end(request, Game.objects.filter(pk=game.pk), opponent_wins=opponent_wins)
            return redirect(reverse("admin:games_game_change", args=[game.pk]))
        context = {**self.admin_site.each_context(request), "opts": self.opts, "game": game, "question": question}
        return TemplateResponse(request, "admin/games/game/end_confirmation.html", {**context, "title": "End a game"})

    def _end(self, request, queryset, *, opponent_wins: bool) -> None:
        ended, refused = 0, []
        for public_id in queryset.exclude(status=Game.Status.FINISHED).values_list("public_id", flat=True):
            try:
                game_end(public_id=public_id, opponent_wins=opponent_wins)
                ended += 1
            except GameError as error:
                # Finished meanwhile (by its players or the sweeper): nothing left to end.
                refused.append(f"{public_id}: {error}")
        self.message_user(request, f"{ended} game(s) ended.", messages.SUCCESS)
        if refused:
            self.message_user(request, "Not ended: " + "; ".join(refused), messages.WARNING)

    @admin.action(description="End the selected games: the player on turn loses, the opponent wins")
    def end_player_on_turn_loses(self, request, queryset) -> None:
        self._end(request, queryset, opponent_wins=True)

    @admin.action(description="End the selected games with no result (they count for no one)")
    def end_with_no_result(self, request, queryset) -> None:
        self._end(request, queryset, opponent_wins=False)

    @admin.action(description="Analyse the selected finished games again (in the background)")
    def analyse_again(self, request, queryset) -> None:
        # Without its analysis, a finished game is the analysing process's to take again (games/analysis.py).
        dropped, _ = Analysis.objects.filter(game__in=queryset, game__status=Game.Status.FINISHED).delete()
        self.message_user(request, f"{dropped} game(s) will be analysed again shortly.", messages.SUCCESS)


class LookOnlyAdmin(admin.ModelAdmin):
    """Rows to look at, never to add or change by hand: what the services made stays what happened."""

    def get_readonly_fields(self, request, obj=None):
        return [field.name for field in self.model._meta.fields]

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False


@admin.register(Analysis)
class AnalysisAdmin(LookOnlyAdmin):
    """The analyses of finished games, to look at: what each cost, and those that failed."""

    list_display = ("game", "made_at", "seconds", "error")
    list_filter = ("game__kind",)
    search_fields = ("game__public_id",)
    list_select_related = ("game",)
    date_hierarchy = "made_at"


@admin.register(Invitation)
class InvitationAdmin(LookOnlyAdmin):
    """Invitations to matches between friends, to look at: they change only through their players' answers."""

    list_display = ("token", "kind", "pool", "inviter", "invitee", "status", "created_at", "expires_at", "game")
    list_filter = ("status", "kind")
    search_fields = ("inviter__username", "invitee__username", "token")
    list_select_related = ("inviter", "invitee", "game")
    date_hierarchy = "created_at"
