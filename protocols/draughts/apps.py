from django.apps import AppConfig

from core.transports import WebMount


class DraughtsConfig(AppConfig):
    name = "protocols.draughts"
    label = "draughts"
    verbose_name = "Draughts rooms"
    # The rooms over the web (the page's transport; the line protocol has its own TLS server).
    web_mounts = (WebMount("draughts/", "protocols.draughts.urls"),)

    def ready(self) -> None:
        from django.conf import settings

        from core.lineservers import LineServer, register

        from . import server, states

        states.install()
        register(
            LineServer(
                "draughts",
                server.handle,
                settings.DRAUGHTS_HOST,
                settings.DRAUGHTS_PORT,
                str(settings.DRAUGHTS_TLS_CERT),
                str(settings.DRAUGHTS_TLS_KEY),
                # A handshake may take its time (the protocol allows 30 s), but never holds up another.
                handshake_timeout=30.0,
                on_start=server.start,
                on_stop=server.stop,
            )
        )
