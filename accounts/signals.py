from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models.signals import post_delete, post_save
from django.dispatch import receiver

from . import credentials

User = get_user_model()


@receiver(post_save, sender=User)
@receiver(post_delete, sender=User)
def forget_credentials(sender, instance, **kwargs) -> None:
    """A changed password or a deactivated account must not be let in by a remembered pair."""
    credentials.forget(instance.get_username())
    # A request that verified the old password may still be writing its entry: drop it once more after commit.
    transaction.on_commit(lambda: credentials.forget(instance.get_username()))
