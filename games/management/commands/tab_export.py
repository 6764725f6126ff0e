import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandParser

from games.selectors import finished_games_with_logs, game_record


class Command(BaseCommand):
    help = (
        "Export every finished game as JSON lines: one game a line, with its players, result, how it ended and "
        "its whole log of throws, selections, moves and passes."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--output", type=Path, help="the file to write (default: standard output)")
        parser.add_argument("--group", type=int, help="only the games of this group")
        parser.add_argument("--size", type=int, help="only the games on boards of this size")

    def handle(self, *args, output: Path | None, group: int | None, size: int | None, **options) -> None:
        games = finished_games_with_logs(group=group, size=size)
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
