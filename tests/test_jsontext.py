"""core/jsontext.py: compact JSON written fast is the standard library's text, byte for byte."""

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from core.jsontext import compact

texts = st.text(st.characters(exclude_categories=()), max_size=8) | st.sampled_from(
    ["\x7f", "\ud800", "\udfff", "é", "\x00", "\u2028", "😀", '"\\/', "\t\n\r\x08\x0c\x1f"]
)
integers = st.integers() | st.integers(2**63 - 3, 2**64 + 3) | st.integers(-(2**64) - 3, -(2**63) + 3)
values = st.recursive(
    st.none() | st.booleans() | integers | texts,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(texts, children, max_size=4),
    max_leaves=16,
)


@settings(max_examples=1000, deadline=None)
@given(values)
def test_the_text_is_the_standard_librarys(value):
    assert compact(value) == json.dumps(value, separators=(",", ":")).encode()


def test_a_message_of_a_game_is_written_by_orjson_as_the_standard_library_would():
    message = {"pieces": [None, {"color": "Blue", "inHome": True}], "turn": "ana", "step": "from", "dice": None}
    assert compact(message) == json.dumps(message, separators=(",", ":")).encode()
    assert compact({"nick": "zoë"}) == b'{"nick":"zo\\u00eb"}'
