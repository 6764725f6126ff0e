"""Compact JSON text, written fast: what `json.dumps(value, separators=(",", ":"))` writes, byte for byte.

Messages sent many times a second (a game's update to its streams, a line of the Fish protocol) are written by
orjson, several times faster than the standard library (which builds an encoder with its options on every call),
wherever its text is the standard library's: pure ASCII without DEL (the standard library escapes every character
past ASCII and DEL, orjson neither) and nothing orjson refuses (a lone surrogate, an integer past 64 bits). The
standard library writes the rest. For values of texts, integers, booleans, None, lists and dicts with text keys: the
two write some floats differently (1e-07 and 1e-7), so no float is given here.
"""

import json
from typing import Any

import orjson


def compact(value: Any) -> bytes:
    """Return `json.dumps(value, separators=(",", ":")).encode()`."""
    try:
        text = orjson.dumps(value)
    except TypeError:  # orjson.JSONEncodeError
        return json.dumps(value, separators=(",", ":")).encode()
    if not text.isascii() or b"\x7f" in text:
        return json.dumps(value, separators=(",", ":")).encode()
    return text
