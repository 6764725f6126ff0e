from django.apps import AppConfig

from core.transports import WebMount


class PlakotoConfig(AppConfig):
    name = "protocols.plakoto"
    label = "plakoto"
    verbose_name = "Plakoto tables"
    web_mounts = (
        # The REST API: clients poll it, so it answers on the connection itself, and the lean handler serves what it
        # leaves. Its methods include PUT, and its token may come in an X-Token header, as its page says.
        WebMount(
            "plakoto/",
            "protocols.plakoto.urls",
            lean=True,
            direct="protocols.plakoto.views.serve",
            early="protocols.plakoto.views.status_early",
            methods="GET, POST, PUT, OPTIONS",
            headers="Content-Type, X-Token",
        ),
        WebMount("tables/plakoto/", "protocols.plakoto.page_urls", cross_origin=False),
    )

    def ready(self) -> None:
        from games.lobby import register_seeks

        from . import polls, services

        register_seeks("plakoto", services.lobby_seeks)
        polls.install()
