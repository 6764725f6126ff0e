from django.contrib import admin

from .models import Ranking, Rating


@admin.register(Ranking)
class RankingAdmin(admin.ModelAdmin):
    list_display = ("player", "kind", "variant", "pool", "victories", "games")
    list_filter = ("kind", "variant", "pool")
    search_fields = ("player__username",)
    list_select_related = ("player",)
    ordering = ("kind", "variant", "pool", "-victories", "games")
    readonly_fields = list_display

    def has_add_permission(self, request) -> bool:
        return False


@admin.register(Rating)
class RatingAdmin(admin.ModelAdmin):
    list_display = ("player", "kind", "variant", "rating", "deviation", "volatility", "games", "victories")
    list_filter = ("kind", "variant")
    search_fields = ("player__username",)
    list_select_related = ("player",)
    ordering = ("kind", "variant", "-rating")
    readonly_fields = list_display

    def has_add_permission(self, request) -> bool:
        return False
