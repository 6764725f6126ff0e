import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandParser

from games.selectors import finished_games_with_logs, game_record


class Command(BaseCommand):
    help = (
        "Export every finished game as JSON lines: one game a line, with its game, options, pool, players in their "
        "seats with their ranks, result, how it ended and its whole log of actions."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--output", type=Path, help="the file to write (default: standard output)")
        parser.add_argument("--game", help="only the games of this kind (tab, …)")
        parser.add_argument("--variant", help="only the games of this variant (Tâb: the board size)")
        parser.add_argument("--pool", help="only the games of this pool (Tâb: the group)")
        parser.add_argument("--group", type=int, help="only the Tâb games of this group")
        parser.add_argument("--size", type=int, help="only the Tâb games on boards of this size")

    def handle(self, *args, output: Path | None, group: int | None, size: int | None, **options) -> None:
        kind, variant, pool = options["game"], options["variant"], options["pool"]
        if group is not None or size is not None:
            kind = "tab"
            pool = str(group) if group is not None else pool
            variant = str(size) if size is not None else variant
        games = finished_games_with_logs(kind=kind, variant=variant, pool=pool)
        file = output.open("w", encoding="utf-8") if output else self.stdout
        count = 0
        try:
            for game in games.iterator(chunk_size=500):
                file.write(json.dumps(game_record(game), ensure_ascii=False, separators=(",", ":")) + "\n")
                count += 1
        finally:
            if output:
                file.close()
        self.stderr.write(f"{count} finished game(s) exported.")
