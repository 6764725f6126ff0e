from django.contrib import admin, messages
from django.urls import reverse
from django.utils.html import format_html

from games.models import Game
from games.services import GameError, game_end

from .models import Entrant, Tournament


class EntrantInline(admin.TabularInline):
    model = Entrant
    fields = ("seat", "joined_at")
    readonly_fields = fields
    extra = 0
    can_delete = False

    def has_add_permission(self, request, obj=None) -> bool:
        return False


@admin.register(Tournament)
class TournamentAdmin(admin.ModelAdmin):
    list_display = ("name", "players", "status", "ending", "game_link", "created_at")
    list_filter = ("players", "game__status", "game__ending")
    search_fields = ("name", "game__public_id")
    list_select_related = ("game",)
    date_hierarchy = "created_at"
    inlines = [EntrantInline]
    actions = ["end_no_result", "end_player_on_turn_loses"]

    # Tournaments change only through their services and the protocol (the tokens are never shown, not even hashed).
    def get_readonly_fields(self, request, obj=None):
        return [field.name for field in self.model._meta.fields]

    def has_add_permission(self, request) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    @admin.display(description="status", ordering="game__status")
    def status(self, tournament: Tournament) -> str:
        return tournament.game.get_status_display()

    @admin.display(description="ending", ordering="game__ending")
    def ending(self, tournament: Tournament) -> str:
        return tournament.game.get_ending_display() or "—"

    @admin.display(description="game")
    def game_link(self, tournament: Tournament) -> str:
        url = reverse("admin:games_game_change", args=[tournament.game_id])
        return format_html('<a href="{}">{}</a>', url, tournament.game.public_id)

    def _end(self, request, queryset, opponent_wins: bool) -> None:
        ended = 0
        unfinished = queryset.exclude(game__status=Game.Status.FINISHED)
        for public_id in unfinished.values_list("game__public_id", flat=True):
            try:
                game_end(public_id=public_id, opponent_wins=opponent_wins)
                ended += 1
            except GameError:
                pass  # ended meanwhile
        self.message_user(request, f"{ended} tournament(s) ended.", messages.SUCCESS)

    @admin.action(description="End the selected tournaments with no result (counted for no one)")
    def end_no_result(self, request, queryset) -> None:
        self._end(request, queryset, opponent_wins=False)

    @admin.action(description="End the selected tournaments: the player on turn ranks last, the others share first")
    def end_player_on_turn_loses(self, request, queryset) -> None:
        self._end(request, queryset, opponent_wins=True)
