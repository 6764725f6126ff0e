from django.conf import settings
from django.db import models


class NickKey(models.Model):
    """The key of an account's nick (accounts/nickrule.py): no two accounts share one, so that `Ana` cannot be
    registered beside `ana`. Accounts that shared a key before the rule keep working, each under a key of its own."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, primary_key=True, related_name="nick_key"
    )
    key = models.CharField(max_length=200, unique=True)

    def __str__(self) -> str:
        return self.key


class SignedInSession(models.Model):
    """A session of the site in which an account is signed in (the Tâb page, the admin): kept so that the account can
    be signed out of all of them at once, on every browser and device (`accounts.services.sessions_end`)."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="signed_in_sessions")
    session_key = models.CharField(max_length=40, unique=True)
    signed_in_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"{self.user_id} since {self.signed_in_at:%Y-%m-%d %H:%M}"
