from django.apps import AppConfig

from core.transports import WebMount


class CourseApiConfig(AppConfig):
    name = "protocols.course_api"
    label = "course_api"
    verbose_name = "Tâb course API"
    # Its functions at the root of the server (the lean handler serves those named in its urls), and the
    # spectators' streams; and the same functions for the site's own page, signed in by its session (site.py).
    web_mounts = (
        WebMount("", "protocols.course_api.urls"),
        WebMount("play/tab/api/", "protocols.course_api.site_urls", cross_origin=False),
    )

    def ready(self) -> None:
        from games import store
        from games.publication import register_renderer

        from . import api, snapshots

        register_renderer("tab", "course", snapshots.render)
        store.locks_ahead(api._as_remembered_player, api.game_acted_in)
