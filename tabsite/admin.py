"""The admin site: Django's, with the same limit on wrong passwords as the game API (core/limits.py)."""

from django.contrib import admin
from django.contrib.auth.signals import user_login_failed
from django.dispatch import receiver

from core import limits


class TabAdminSite(admin.AdminSite):
    def login(self, request, extra_context=None):
        if request.method == "POST":
            limits.check_login(request.POST.get("username", ""))
        return super().login(request, extra_context)


@receiver(user_login_failed)
def count_failed_login(sender, credentials, request=None, **kwargs) -> None:
    limits.login_failed(credentials.get("username", ""))
