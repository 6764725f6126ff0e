from django.contrib import admin

from .models import Game, GameEvent


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

    # Games change only through the game services, never by hand, so that the move log stays the truth.
    def get_readonly_fields(self, request, obj=None):
        return [field.name for field in self.model._meta.fields]

    def has_add_permission(self, request) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False
