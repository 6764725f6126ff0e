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
