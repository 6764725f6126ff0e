"""The authentication backend of the admin's sign-in: Django's, with every password hash counted in the address's
budget and run through the hashing gate (accounts/hashing.py), as the game API's are. Without it, the sign-in page
would be the one place where a stranger could make the server hash without limit (Django hashes even for an unknown
username, so that the answer's timing tells nothing)."""

from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend
from django.contrib.auth.hashers import make_password
from django.http import HttpRequest

from core import limits

from . import hashing
from .services import password_check


class GatedModelBackend(ModelBackend):
    def authenticate(
        self, request: HttpRequest | None, username: str | None = None, password: str | None = None, **kwargs: Any
    ) -> Any:
        if username is None or password is None:
            return None
        limits.hash_spent()
        User = get_user_model()
        try:
            user = User._default_manager.get_by_natural_key(username)
        except User.DoesNotExist:
            # The same work as a wrong password, as Django does.
            hashing.gate().call(make_password, password)
            return None
        matches, upgraded = hashing.gate().call(password_check, password, user.password)
        if upgraded:
            user.password = upgraded
            user.save(update_fields=["password"])
        return user if matches and self.user_can_authenticate(user) else None
