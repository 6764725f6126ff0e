from django.contrib import admin

from .models import Ranking, Rating


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


@admin.register(Rating)
class RatingAdmin(admin.ModelAdmin):
    list_display = ("player", "size", "rating", "deviation", "volatility", "games", "victories")
    list_filter = ("size",)
    search_fields = ("player__username",)
    list_select_related = ("player",)
    ordering = ("size", "-rating")
    readonly_fields = list_display

    def has_add_permission(self, request) -> bool:
        return False
