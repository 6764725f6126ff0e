import threading

from django.core.management.base import BaseCommand, CommandError

from games.analysis import analyse, analyse_pending, follow
from games.models import Game


class Command(BaseCommand):
    help = (
        "Analyse finished games (each position's chances, the costliest turns): those not analysed yet, the games "
        "named, or all of them again; --follow keeps analysing games as they finish."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("games", nargs="*", help="public ids of games to analyse (again)")
        parser.add_argument("--all", action="store_true", help="analyse every finished game again")
        parser.add_argument("--follow", action="store_true", help="keep analysing games as they finish")
        parser.add_argument("--positions", type=int, help="positions looked at per game (ANALYSIS_POSITIONS)")
        parser.add_argument("--seconds", type=float, help="seconds per game at most (ANALYSIS_SECONDS)")

    def handle(self, *args, **options) -> None:
        if options["follow"]:
            follow(threading.Event())
            return
        budget = {"positions": options["positions"], "seconds": options["seconds"]}
        if not (options["games"] or options["all"]):
            self.stdout.write(f"{analyse_pending(**budget)} game(s) analysed.")
            return
        finished = Game.objects.filter(status=Game.Status.FINISHED, started_at__isnull=False)
        if options["games"]:
            finished = finished.filter(public_id__in=options["games"])
            missing = set(options["games"]) - set(finished.values_list("public_id", flat=True))
            if missing:
                raise CommandError(f"no finished game {', '.join(sorted(missing))}")
        game_ids = list(finished.order_by("pk").values_list("pk", flat=True))
        for game_id in game_ids:
            analysis = analyse(game_id, **budget)
            if analysis.error:
                self.stderr.write(f"game {game_id}: {analysis.error}")
        self.stdout.write(f"{len(game_ids)} game(s) analysed.")
