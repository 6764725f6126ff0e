from django.apps import AppConfig


class FishConfig(AppConfig):
    name = "protocols.fish"
    label = "fish"
    verbose_name = "Fish tournaments"

    def ready(self) -> None:
        from django.conf import settings

        from core.lineservers import LineServer, register
        from games.rules.fish import ENGINE
        from games.services import DEADLINES_KEPT_THROUGH_OUTAGES

        from . import server

        # A turn's deadline is the protocol's own: a restart neither extends nor resets it.
        DEADLINES_KEPT_THROUGH_OUTAGES.add(ENGINE.kind)

        register(LineServer("fish", server.handle, settings.FISH_HOST, settings.FISH_PORT))
