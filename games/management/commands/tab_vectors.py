"""Write tests/vectors/tab.json.gz, the vectors that hold static/js/rules/tab.js to games/rules/tab.py."""

import gzip
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from games.rules.vectors import generate, render, summary

VECTORS_PATH = Path(settings.BASE_DIR) / "tests" / "vectors" / "tab.json.gz"


def stored_vectors(path: Path = VECTORS_PATH) -> bytes | None:
    """Return the JSON text of the vectors stored at `path`, or None if there is no such file."""
    try:
        return gzip.decompress(path.read_bytes())
    except FileNotFoundError:
        return None


class Command(BaseCommand):
    help = "Write the Tâb rules test vectors from games/rules/tab.py, or check that the stored ones are current."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--check", action="store_true", help="write nothing; fail if the stored vectors differ from new ones"
        )
        parser.add_argument("--output", type=Path, default=VECTORS_PATH, help="the file to write or check")

    def handle(self, *args: Any, check: bool, output: Path, **options: Any) -> None:
        vectors = generate()
        text = render(vectors)
        if check:
            # The JSON text is compared rather than the compressed bytes, which may vary with the zlib build.
            stored = stored_vectors(output)
            if stored != text:
                problem = "is missing" if stored is None else "is not what games/rules/tab.py gives now"
                raise CommandError(f"{output} {problem}: run `python manage.py tab_vectors`")
            self.stdout.write(f"{output} is up to date.")
            return
        output.parent.mkdir(parents=True, exist_ok=True)
        # No timestamp in the header, so that the same vectors always give the same file.
        output.write_bytes(gzip.compress(text, compresslevel=9, mtime=0))
        counts = ", ".join(f"{name} {count}" for name, count in sorted(summary(vectors).items()))
        self.stdout.write(f"Wrote {output} ({output.stat().st_size:,} bytes): {counts}.")
