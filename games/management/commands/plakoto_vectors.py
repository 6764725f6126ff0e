"""Write tests/vectors/plakoto.json.gz: the vectors that hold static/js/rules/plakoto.js to the Python rules."""

from games.rules import plakoto_vectors

from ..vectors_file import VectorsCommand


class Command(VectorsCommand):
    help = "Write the Plakoto rules test vectors from games/rules/plakoto.py, or check the stored ones."
    game = "plakoto"
    source = "games/rules/plakoto.py"
    generate = staticmethod(plakoto_vectors.generate)
    render = staticmethod(plakoto_vectors.render)
    summary = staticmethod(plakoto_vectors.summary)
