from django.apps import AppConfig


class AccountsConfig(AppConfig):
    name = "accounts"
    verbose_name = "Accounts"

    def ready(self) -> None:
        from core import dbthread

        from . import services, signals  # noqa: F401

        dbthread.around_each_batch(services.read_ahead)
