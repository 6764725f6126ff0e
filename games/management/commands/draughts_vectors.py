"""Write tests/vectors/draughts.json.gz: the vectors that hold static/js/rules/draughts.js to the Python rules."""

import gzip
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from games.rules.draughts_vectors import generate, render, summary

VECTORS_PATH = Path(settings.BASE_DIR) / "tests" / "vectors" / "draughts.json.gz"


def stored_vectors(path: Path = VECTORS_PATH) -> bytes | None:
    """Return the JSON text of the vectors stored at `path`, or None if there is no such file."""
    try:
        return gzip.decompress(path.read_bytes())
    except FileNotFoundError:
        return None


class Command(BaseCommand):
    help = (
        "Write the draughts rules test vectors from games/rules/draughts.py, or check that the stored ones are current."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--check", action="store_true", help="write nothing; fail if the stored vectors differ")
        parser.add_argument("--output", type=Path, default=VECTORS_PATH, help="the file to write or check")

    def handle(self, *args: Any, check: bool, output: Path, **options: Any) -> None:
        text = render(vectors := generate())
        if check:
            if stored_vectors(output) != text:
                raise CommandError(
                    f"{output} is not what games/rules/draughts.py gives now: run `manage.py draughts_vectors`"
                )
            self.stdout.write(f"{output} is up to date.")
            return
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_bytes(gzip.compress(text, compresslevel=9, mtime=0))
        counts = ", ".join(f"{name} {count}" for name, count in sorted(summary(vectors).items()))
        self.stdout.write(f"Wrote {output} ({output.stat().st_size:,} bytes): {counts}.")
