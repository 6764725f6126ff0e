from django.core.management.base import BaseCommand, CommandError

from games.history import LogError
from games.services import games_recompute


class Command(BaseCommand):
    help = "Recompute every game's result, the rankings and the Glicko-2 ratings from the games' move logs."

    def handle(self, *args, **options) -> None:
        try:
            summary = games_recompute()
        except LogError as error:
            raise CommandError(f"a log cannot be replayed, nothing was changed: {error}") from None
        self.stdout.write(
            f"{summary['games']} games counted, {summary['corrected']} result(s) corrected; "
            "rankings and ratings rebuilt."
        )
