"""Write tests/vectors/tab.json.gz, the vectors that hold static/js/rules/tab.js to games/rules/tab.py."""

from pathlib import Path

from games.rules import vectors

from ..vectors_file import VectorsCommand, read_vectors


class Command(VectorsCommand):
    help = "Write the Tâb rules test vectors from games/rules/tab.py, or check that the stored ones are current."
    game = "tab"
    source = "games/rules/tab.py"
    generate = staticmethod(vectors.generate)
    render = staticmethod(vectors.render)
    summary = staticmethod(vectors.summary)


VECTORS_PATH = Command.path()


def stored_vectors(path: Path = VECTORS_PATH) -> bytes | None:
    """Return the JSON text of the vectors stored at `path`, or None if there is no such file."""
    return read_vectors(path)
