"""The Fish player protocol without I/O: a client's bytes cut into lines, a line read as a request, a request's fields
checked for their types, and answers written as lines. The server (server.py) feeds it; the services
(services.py) decide.

A request is one JSON object on one line; each gets one JSON object on one line. A line longer than MAX_LINE bytes
(its "\\n" not counted) is refused as soon as it is known to be too long, and ends the connection.
"""

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import orjson

from core.errors import Refusal
from core.jsontext import compact

MAX_LINE = 64 * 1024

ACTIONS = frozenset(
    {
        "join_tournament",
        "check_placement",
        "place_penguin",
        "check_move",
        "move_penguin",
        "check_turn",
        "get_state",
        "get_moves_for_color",
        "get_moves_for_location",
        "is_game_over",
    }
)
TOURNAMENT_ID_LENGTH = 64
# Digits beyond which an integer is kept as a stand-in of its sign and size: Python refuses to read very long ones,
# and such a number is no coordinate of the board nor a tournament's id of at most 64 characters.
LONGEST_INTEGER = 4000


class _Huge(int):
    """An integer too long to read, as far as the protocol cares: its sign, its size, and a short name."""

    name: str

    def __new__(cls, text: str) -> "_Huge":
        value = super().__new__(cls, (-1 if text.startswith("-") else 1) * 10 ** (LONGEST_INTEGER + 1))
        value.name = f"{text[:8]}… ({len(text.lstrip('-'))} digits)"
        return value

    def __str__(self) -> str:
        return self.name

    __repr__ = __str__

    def __format__(self, spec: str) -> str:
        return self.name


class FishError(Refusal):
    """A refused request: `{"error_type": …, "error_message": str(error)}`."""

    def __init__(self, error_type: str, message: str):
        super().__init__(message)
        self.error_type = error_type


def unknown(message: str) -> FishError:
    return FishError("Unknown_Action", message)


class Lines:
    """Cut a client's bytes into lines, whatever the packets; `feed` returns the lines completed so far, and
    `too_long` tells once more than MAX_LINE bytes of one line have come."""

    def __init__(self) -> None:
        self._buffer = bytearray()
        self.too_long = False

    def feed(self, data: bytes) -> list[bytes]:
        buffer = self._buffer
        buffer += data
        lines: list[bytes] = []
        start = 0
        while (end := buffer.find(b"\n", start)) != -1:
            if end - start > MAX_LINE:
                self.too_long = True
                break
            lines.append(bytes(buffer[start:end]))
            start = end + 1
        del buffer[:start]
        if len(buffer) > MAX_LINE and b"\n" not in buffer[: MAX_LINE + 1]:
            self.too_long = True
        return lines


def _integer(text: str) -> int:
    return _Huge(text) if len(text) > LONGEST_INTEGER else int(text)


def read(line: bytes) -> Mapping[str, Any] | None:
    """Return the request a line holds, None for a blank line (ignored), or raise an Unknown_Action FishError."""
    if line.endswith(b"\r"):
        line = line[:-1]
    if not line.strip():
        return None
    request = _read_flat(line)
    if request is not None:
        return _checked(request)
    try:
        request = json.loads(line.decode("utf-8"), parse_int=_integer, parse_constant=_constant)
    except UnicodeDecodeError:
        raise unknown("the line is not UTF-8 text") from None
    except (ValueError, RecursionError):
        raise unknown("the line is not one JSON value") from None
    return _checked(request)


def _read_flat(line: bytes) -> dict[str, Any] | None:
    """Return the object a line holds if it is a flat one (every value a text, an integer within 64 bits, a boolean
    or null, as nearly every request is), read by orjson: for such objects what the standard library reads, several
    times faster. None for anything else, which the standard library reads (orjson reads a longer integer as a float,
    and refuses what the standard library reads otherwise or refuses with its own message)."""
    try:
        value = orjson.loads(line)
    except orjson.JSONDecodeError:
        return None
    if type(value) is not dict:
        return None
    for item in value.values():
        if not (item is None or type(item) is str or type(item) is int or type(item) is bool):
            return None
    return value


def _checked(request: object) -> Mapping[str, Any]:
    if not isinstance(request, dict):
        raise unknown("a request is a JSON object, with an action")
    action = request.get("action")
    if not isinstance(action, str):
        raise unknown('a request names its action: {"action": "get_state", …}')
    if action not in ACTIONS:
        raise unknown(f"there is no action {action[:40]!r}; the actions are {', '.join(sorted(ACTIONS))}")
    return request


def _constant(name: str) -> object:
    raise ValueError(f"{name} is not JSON")


def is_unicode(value: object) -> bool:
    """Return whether `value` is a string of Unicode characters (JSON's escapes can make lone surrogates, which are
    not)."""
    if not isinstance(value, str):
        return False
    try:
        value.encode()
    except UnicodeEncodeError:
        return False
    return True


def is_integer(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def tournament_name(request: Mapping[str, Any]) -> str:
    """Return the tournament a join names (an integer as its decimal text), or raise Tournament_Error."""
    value = request.get("tournament_id")
    if is_integer(value):
        if abs(value) >= 10**TOURNAMENT_ID_LENGTH:
            raise FishError("Tournament_Error", "tournament_id has more than 64 digits")
        return str(value)
    if is_unicode(value) and 1 <= len(value) <= TOURNAMENT_ID_LENGTH:
        return value
    if isinstance(value, str):
        raise FishError("Tournament_Error", "tournament_id is a text of 1 to 64 Unicode characters")
    raise FishError("Tournament_Error", "tournament_id is missing: an integer, or a text of 1 to 64 characters")


def player_count(request: Mapping[str, Any]) -> int | None:
    """Return the number of players a join asks for (None: not given), or raise Tournament_Error."""
    if "players" not in request:
        return None
    value = request["players"]
    if not is_integer(value) or not 2 <= value <= 4:
        raise FishError("Tournament_Error", "players is the number of players, an integer from 2 to 4")
    return value


def token(request: Mapping[str, Any]) -> str:
    value = request.get("user_token")
    if not isinstance(value, str):
        raise FishError("Incorrect_Token", "user_token is missing: the token join_tournament answered with")
    if not is_unicode(value):
        raise FishError("Incorrect_Token", "this user_token was not issued by this server")
    return value


@dataclass(frozen=True, slots=True)
class Fields:
    """A request's fields read for an action (the coordinates and the colour), or the first one that is ill-typed."""

    values: tuple[int, ...] = ()
    color: str | None = None
    error: FishError | None = None


COORDINATES = {
    "check_placement": ("row", "col"),
    "place_penguin": ("row", "col"),
    "get_moves_for_location": ("row", "col"),
    "check_move": ("start_row", "start_col", "end_row", "end_col"),
    "move_penguin": ("start_row", "start_col", "end_row", "end_col"),
}


def fields(request: Mapping[str, Any]) -> Fields:
    """Read the action's own fields; an ill-typed one is kept as the error (it is answered after the token's)."""
    action = request["action"]
    if action == "get_moves_for_color":
        color = request.get("color")
        if not isinstance(color, str):
            return Fields(error=FishError("Unknown_Color", 'color is the name of a player\'s colour, such as "red"'))
        return Fields(color=color)
    values = []
    for name in COORDINATES.get(action, ()):
        value = request.get(name)
        if not is_integer(value):
            shown = "missing" if name not in request else f"not an integer ({json.dumps(value)[:20]})"
            return Fields(error=FishError("Invalid_Coordinate", f"{name} is {shown}"))
        values.append(value)
    return Fields(values=tuple(values))


def answer(payload: Mapping[str, Any]) -> bytes:
    """Return the line of an answer: compact JSON, every character past ASCII escaped as the standard library does
    (core/jsontext.py: written by orjson where its text is the standard library's)."""
    return compact(payload) + b"\n"


def failure(error: FishError) -> bytes:
    return answer({"error_type": error.error_type, "error_message": str(error)})
