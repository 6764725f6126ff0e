from django.contrib import admin, messages

from .models import Game, GameEvent
from .services import GameError, game_end


class GameEventInline(admin.TabularInline):
    model = GameEvent
    fields = ("seq", "kind", "player", "data", "created_at")
    readonly_fields = fields
    extra = 0
    can_delete = False
    ordering = ("seq",)

    def has_add_permission(self, request, obj=None) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False


@admin.register(Game)
class GameAdmin(admin.ModelAdmin):
    list_display = (
        "public_id",
        "group",
        "size",
        "status",
        "initial_player",
        "second_player",
        "winner",
        "ending",
        "created_at",
        "finished_at",
    )
    list_filter = ("status", "ending", "size", "group")
    search_fields = ("public_id", "initial_player__username", "second_player__username")
    list_select_related = ("initial_player", "second_player", "winner")
    date_hierarchy = "created_at"
    inlines = [GameEventInline]
    actions = ["end_player_on_turn_loses", "end_with_no_result"]

    # Games change only through the game services, never by hand, so that the move log stays the truth.
    def get_readonly_fields(self, request, obj=None):
        return [field.name for field in self.model._meta.fields]

    def has_add_permission(self, request) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False

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
