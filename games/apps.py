from django.apps import AppConfig


class GamesConfig(AppConfig):
    name = "games"
    verbose_name = "Games"

    def ready(self) -> None:
        from core import dbthread

        from . import invitations, lobby, publication, selectors, store

        publication.install()
        dbthread.around_each_batch(publication.gathered_batch)
        dbthread.inside_each_batch(store.locked_together)
        # Tâb's matches between accounts are the platform's own: its page seats them.
        lobby.register_seeks("tab", selectors.tab_seeks)
        invitations.INVITABLE.add("tab")
