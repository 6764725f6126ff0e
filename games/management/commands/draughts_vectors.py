"""Write tests/vectors/draughts.json.gz: the vectors that hold static/js/rules/draughts.js to the Python rules."""

from pathlib import Path

from games.rules import draughts_vectors

from ..vectors_file import VectorsCommand, read_vectors


class Command(VectorsCommand):
    help = "Write the draughts rules test vectors from games/rules/draughts.py, or check the stored ones."
    game = "draughts"
    source = "games/rules/draughts.py"
    generate = staticmethod(draughts_vectors.generate)
    render = staticmethod(draughts_vectors.render)
    summary = staticmethod(draughts_vectors.summary)


VECTORS_PATH = Command.path()


def stored_vectors(path: Path = VECTORS_PATH) -> bytes | None:
    """Return the JSON text of the vectors stored at `path`, or None if there is no such file."""
    return read_vectors(path)
