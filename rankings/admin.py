from django.contrib import admin

from .models import Ranking


@admin.register(Ranking)
class RankingAdmin(admin.ModelAdmin):
    list_display = ("player", "group", "size", "victories", "games")
    list_filter = ("size", "group")
    search_fields = ("player__username",)
    list_select_related = ("player",)
    ordering = ("group", "size", "-victories", "games")
    readonly_fields = ("player", "group", "size", "victories", "games")

    def has_add_permission(self, request) -> bool:
        return False
