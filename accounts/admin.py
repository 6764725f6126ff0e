from django.contrib import admin, messages
from django.contrib.auth import get_user_model
from django.contrib.auth.admin import UserAdmin

from .services import user_set_active

User = get_user_model()

admin.site.unregister(User)


@admin.register(User)
class PlayerAdmin(UserAdmin):
    """Django's user admin (search by nick, reset a password), with actions to (de)activate accounts at once."""

    list_display = ("username", "is_active", "is_staff", "date_joined", "last_login")
    list_filter = ("is_active", "is_staff", "is_superuser")
    search_fields = ("username", "email")
    ordering = ("username",)
    actions = ["deactivate", "reactivate"]

    def get_readonly_fields(self, request, obj=None):
        # A nick is permanent: rankings, game logs and every process's accounts.nicks name players by it.
        readonly = super().get_readonly_fields(request, obj)
        return readonly if obj is None else (*readonly, "username")

    @admin.action(description="Deactivate the selected accounts (their API calls are refused)")
    def deactivate(self, request, queryset) -> None:
        changed = user_set_active(user_ids=list(queryset.values_list("pk", flat=True)), active=False)
        self.message_user(request, f"{changed} account(s) deactivated.", messages.SUCCESS)

    @admin.action(description="Reactivate the selected accounts")
    def reactivate(self, request, queryset) -> None:
        changed = user_set_active(user_ids=list(queryset.values_list("pk", flat=True)), active=True)
        self.message_user(request, f"{changed} account(s) reactivated.", messages.SUCCESS)
