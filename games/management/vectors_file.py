"""The rules vectors' files (tests/vectors/<game>.json.gz), written and checked by each game's management command:
what holds a browser's rules engine (static/js/rules/<game>.js) to the Python module."""

import gzip
from collections.abc import Callable
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

VECTORS_DIR = Path(settings.BASE_DIR) / "tests" / "vectors"


def read_vectors(path: Path) -> bytes | None:
    """Return the JSON text of the vectors stored at `path`, or None if there is no such file."""
    try:
        return gzip.decompress(path.read_bytes())
    except FileNotFoundError:
        return None


class VectorsCommand(BaseCommand):
    """Write a game's vectors, or check that the stored ones are what its rules give now."""

    game: str  # "tab": the file is tests/vectors/<game>.json.gz, the command <game>_vectors
    source: str  # the rules module, for the messages: "games/rules/tab.py"
    generate: Callable[[], dict[str, Any]]
    render: Callable[[dict[str, Any]], bytes]
    summary: Callable[[dict[str, Any]], dict[str, int]]

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--check", action="store_true", help="write nothing; fail if the stored vectors differ from new ones"
        )
        parser.add_argument("--output", type=Path, default=self.path(), help="the file to write or check")

    @classmethod
    def path(cls) -> Path:
        return VECTORS_DIR / f"{cls.game}.json.gz"

    def handle(self, *args: Any, check: bool, output: Path, **options: Any) -> None:
        vectors = type(self).generate()
        text = type(self).render(vectors)
        if check:
            # The JSON text is compared rather than the compressed bytes, which may vary with the zlib build.
            stored = read_vectors(output)
            if stored != text:
                problem = "is missing" if stored is None else f"is not what {self.source} gives now"
                raise CommandError(f"{output} {problem}: run `python manage.py {self.game}_vectors`")
            self.stdout.write(f"{output} is up to date.")
            return
        output.parent.mkdir(parents=True, exist_ok=True)
        # No timestamp in the header, so that the same vectors always give the same file.
        output.write_bytes(gzip.compress(text, compresslevel=9, mtime=0))
        counts = ", ".join(f"{name} {count}" for name, count in sorted(type(self).summary(vectors).items()))
        self.stdout.write(f"Wrote {output} ({output.stat().st_size:,} bytes): {counts}.")
