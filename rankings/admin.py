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
    list_display = (
        "player",
        "kind",
        "variant",
        "rating_shown",
        "deviation_shown",
        "volatility_shown",
        "games",
        "victories",
    )
    list_filter = ("kind", "variant")
    search_fields = ("player__username",)
    list_select_related = ("player",)
    ordering = ("kind", "variant", "-rating")
    readonly_fields = list_display

    def has_add_permission(self, request) -> bool:
        return False

    # Whole numbers, as the site shows them: a rating has no meaning past that (its deviation is tens of points).
    @admin.display(description="rating", ordering="rating")
    def rating_shown(self, rating: Rating) -> str:
        return f"{rating.rating:.0f}"

    @admin.display(description="deviation", ordering="deviation")
    def deviation_shown(self, rating: Rating) -> str:
        return f"{rating.deviation:.0f}"

    @admin.display(description="volatility", ordering="volatility")
    def volatility_shown(self, rating: Rating) -> str:
        return f"{rating.volatility:.4f}"
