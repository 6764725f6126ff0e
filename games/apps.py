from django.apps import AppConfig


class GamesConfig(AppConfig):
    name = "games"
    verbose_name = "Games"

    def ready(self) -> None:
        from . import lobby, publication, selectors

        publication.install()
        lobby.register_seeks("tab", selectors.tab_seeks)
