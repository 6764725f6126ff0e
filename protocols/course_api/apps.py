from django.apps import AppConfig


class CourseApiConfig(AppConfig):
    name = "protocols.course_api"
    label = "course_api"
    verbose_name = "Tâb course API"

    def ready(self) -> None:
        from games.publication import register_renderer

        from . import snapshots

        register_renderer("tab", "course", snapshots.render)
