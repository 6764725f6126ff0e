from django.contrib import admin, messages
from django.urls import reverse
from django.utils import timezone
from django.utils.html import format_html

from . import presence
from .models import Room
from .services import RoomNotFound, room_close


class DeletedFilter(admin.SimpleListFilter):
    title = "deleted"
    parameter_name = "deleted"

    def lookups(self, request, model_admin):
        return [("no", "open"), ("yes", "deleted")]

    def queryset(self, request, queryset):
        if self.value() == "no":
            return queryset.filter(deleted_at=None)
        if self.value() == "yes":
            return queryset.exclude(deleted_at=None)
        return queryset


@admin.register(Room)
class RoomAdmin(admin.ModelAdmin):
    list_display = ("id", "game_link", "status", "white_in", "black_in", "online", "created_at", "deleted_at")
    list_filter = (DeletedFilter, "game__status", "game__ending", "white_in", "black_in")
    search_fields = ("id", "game__public_id")
    list_select_related = ("game",)
    date_hierarchy = "created_at"
    actions = ["close"]

    # Rooms change only through their services: what players did stays what happened.
    def get_readonly_fields(self, request, obj=None):
        return [field.name for field in self.model._meta.fields]

    def has_add_permission(self, request) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False

    @admin.display(description="game")
    def game_link(self, room: Room) -> str:
        url = reverse("admin:games_game_change", args=[room.game_id])
        return format_html('<a href="{}">{}</a>', url, room.game.public_id)

    @admin.display(description="status", ordering="game__status")
    def status(self, room: Room) -> str:
        return room.game.get_status_display()

    @admin.display(description="online")
    def online(self, room: Room) -> str:
        now = timezone.now()
        held = [name for name in presence.COLOURS if presence.online(room, name, now)]
        return ", ".join(held) or "nobody"

    @admin.action(description="Close the selected rooms (a game in play ends with no result)")
    def close(self, request, queryset) -> None:
        closed = 0
        for room_id in queryset.filter(deleted_at=None).values_list("pk", flat=True):
            try:
                room_close(room_id=room_id)
                closed += 1
            except RoomNotFound:
                pass  # deleted meanwhile by its players
        self.message_user(request, f"{closed} room(s) closed.", messages.SUCCESS)
