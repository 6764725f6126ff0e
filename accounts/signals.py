from django.contrib.auth import get_user_model
from django.contrib.auth.signals import user_logged_in, user_logged_out
from django.db import IntegrityError, transaction
from django.db.models.signals import post_delete, post_save
from django.dispatch import receiver

from . import credentials, services
from .models import NickKey
from .nickrule import nick_key

User = get_user_model()


@receiver(post_save, sender=User)
@receiver(post_delete, sender=User)
def forget_credentials(sender, instance, update_fields=None, **kwargs) -> None:
    """A changed password or a deactivated account must not be let in by a remembered pair (a sign-in to the site,
    which saves only the time of the last sign-in, changes neither)."""
    if update_fields is not None and set(update_fields) == {"last_login"}:
        return
    credentials.forget(instance.get_username())
    # A request that verified the old password may still be writing its entry: drop it once more after commit.
    transaction.on_commit(lambda: credentials.forget(instance.get_username()))


@receiver(post_save, sender=User)
def keep_nick_key(sender, instance, created: bool, raw: bool = False, update_fields=None, **kwargs) -> None:
    """Give every account the key of its nick (accounts/nickrule.py), whatever made or renamed it.

    A registration takes the key or fails (`_nick_key_strict`); an account made or renamed another way (the admin,
    createsuperuser, the computer players) whose nick is taken gets a key of its own, as older accounts did."""
    if raw or (update_fields is not None and "username" not in update_fields):
        return
    key = nick_key(instance.get_username())
    if getattr(instance, "_nick_key_strict", False):
        NickKey.objects.create(user=instance, key=key)
        return
    if not created and NickKey.objects.filter(user=instance, key__in=[key, f"{key}#{instance.pk}"]).exists():
        return
    try:
        with transaction.atomic():
            NickKey.objects.update_or_create(user=instance, defaults={"key": key})
    except IntegrityError:
        NickKey.objects.update_or_create(user=instance, defaults={"key": f"{key}#{instance.pk}"})


@receiver(user_logged_in)
def remember_session(sender, request, user, **kwargs) -> None:
    """Keep the session an account signs in to (the site's page, the admin), to sign it out everywhere at will."""
    if request is None:
        return
    if request.session.session_key is None:
        # Signing in over another account's session empties it, key and all: it gets its key now.
        request.session.save()
    services.session_signed_in(user_id=user.pk, session_key=request.session.session_key)


@receiver(user_logged_out)
def forget_session(sender, request, user, **kwargs) -> None:
    if request is not None and request.session.session_key:
        services.session_signed_out(session_key=request.session.session_key)
