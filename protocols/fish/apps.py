from django.apps import AppConfig

from core.transports import WebMount


class FishConfig(AppConfig):
    name = "protocols.fish"
    label = "fish"
    verbose_name = "Fish tournaments"
    # The page's transport (the player protocol itself has its own TCP server).
    web_mounts = (WebMount("tables/fish/", "protocols.fish.urls", cross_origin=False),)

    def ready(self) -> None:
        from django.conf import settings

        from core.lineservers import LineServer, register
        from games.lobby import register_seeks
        from games.rules.fish import ENGINE
        from games.services import DEADLINES_KEPT_THROUGH_OUTAGES

        from . import server, services

        register_seeks(ENGINE.kind, services.lobby_seeks)
        # A turn's deadline is the protocol's own: a restart neither extends nor resets it.
        DEADLINES_KEPT_THROUGH_OUTAGES.add(ENGINE.kind)

        register(LineServer("fish", None, settings.FISH_HOST, settings.FISH_PORT, protocol=server.FishConnection))
