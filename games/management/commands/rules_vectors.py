"""Write or check the rules vectors of the registered games: tests/vectors/<game>.json.gz, what holds a browser's
rules engine (static/js/rules/<game>.js) to the Python module.

A game's vectors come from `games/rules/<game>_vectors.py`, which has `generate()` (the positions and what the rules
say of them), `render(vectors)` (their JSON text) and `summary(vectors)` (counts, for people).
"""

import gzip
import importlib
from pathlib import Path
from types import ModuleType
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from games.rules import ENGINES

VECTORS_DIR = Path(settings.BASE_DIR) / "tests" / "vectors"


def vectors_path(game: str) -> Path:
    return VECTORS_DIR / f"{game}.json.gz"


def vectors_module(game: str) -> ModuleType | None:
    """The module that makes `game`'s vectors, or None for a game whose rules have no browser twin."""
    try:
        return importlib.import_module(f"games.rules.{game}_vectors")
    except ModuleNotFoundError as error:
        if error.name != f"games.rules.{game}_vectors":
            raise
        return None


def read_vectors(game: str) -> bytes | None:
    """Return the JSON text of `game`'s stored vectors, or None if there is no such file."""
    try:
        return gzip.decompress(vectors_path(game).read_bytes())
    except FileNotFoundError:
        return None


class Command(BaseCommand):
    help = "Write the rules test vectors of the given games (every game with a browser twin by default), or check them."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("games", nargs="*", help="the games' kinds (tab, draughts, …)")
        parser.add_argument(
            "--check", action="store_true", help="write nothing; fail if the stored vectors differ from new ones"
        )

    def handle(self, *args: Any, games: list[str], check: bool, **options: Any) -> None:
        for game in games or [game for game in ENGINES if vectors_module(game)]:
            module = vectors_module(game) if game in ENGINES else None
            if module is None:
                raise CommandError(f"{game} is not a game with rules vectors")
            vectors = module.generate()
            text = module.render(vectors)
            path = vectors_path(game)
            if check:
                # The JSON text is compared rather than the compressed bytes, which may vary with the zlib build.
                stored = read_vectors(game)
                if stored != text:
                    problem = "is missing" if stored is None else f"is not what games/rules/{game}.py gives now"
                    raise CommandError(f"{path} {problem}: run `python manage.py rules_vectors {game}`")
                self.stdout.write(f"{path} is up to date.")
                continue
            path.parent.mkdir(parents=True, exist_ok=True)
            # No timestamp in the header, so that the same vectors always give the same file.
            path.write_bytes(gzip.compress(text, compresslevel=9, mtime=0))
            counts = ", ".join(f"{name} {count}" for name, count in sorted(module.summary(vectors).items()))
            self.stdout.write(f"Wrote {path} ({path.stat().st_size:,} bytes): {counts}.")
