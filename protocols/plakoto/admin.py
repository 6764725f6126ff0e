from django.contrib import admin, messages
from django.urls import reverse
from django.utils.html import format_html

from games.models import Game
from games.services import GameError, game_end

from .models import Table
from .services import table_reset, table_view


@admin.register(Table)
class TableAdmin(admin.ModelAdmin):
    list_display = ("name", "status", "w_username", "b_username", "game_link", "last_change")
    list_filter = ("game__status", "game__ending")
    search_fields = ("name", "w_username", "b_username")
    list_select_related = ("game",)
    actions = ["reset", "end_player_on_turn_loses"]
    exclude = ("w_token", "b_token")

    # Tables change only through their services (the tokens are never shown, not even hashed).
    def get_readonly_fields(self, request, obj=None):
        return [field.name for field in self.model._meta.fields if field.name not in self.exclude]

    def has_add_permission(self, request) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False

    @admin.display(description="status")
    def status(self, table: Table) -> str:
        return table_view(table.name).status

    @admin.display(description="game")
    def game_link(self, table: Table) -> str:
        if table.game is None:
            return "—"
        url = reverse("admin:games_game_change", args=[table.game_id])
        return format_html('<a href="{}">{}</a>', url, table.game.public_id)

    @admin.action(description="Reset the selected tables (a game in play ends with no result; the seats are freed)")
    def reset(self, request, queryset) -> None:
        for name in queryset.values_list("name", flat=True):
            table_reset(name=name, token=None, staff=True)
        self.message_user(request, f"{queryset.count()} table(s) reset.", messages.SUCCESS)

    @admin.action(description="End the selected tables' games: the player on turn loses")
    def end_player_on_turn_loses(self, request, queryset) -> None:
        ended = 0
        for public_id in queryset.filter(game__status=Game.Status.PLAYING).values_list("game__public_id", flat=True):
            try:
                game_end(public_id=public_id, opponent_wins=True)
                ended += 1
            except GameError:
                pass  # ended meanwhile
        self.message_user(request, f"{ended} game(s) ended.", messages.SUCCESS)
