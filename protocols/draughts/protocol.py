"""The draughts room server's line protocol, without I/O: lines cut from the bytes a client sends, commands read from
lines, and the answers' text. The server (server.py) feeds it and sends what it returns.

Lines end with "\\n", "\\r" or "\\r\\n" (one ending even when its two bytes arrive apart); a line has at most
MAX_LINE bytes. A command is the line's first word, words being separated by spaces (U+0020) only.
"""

import re
from dataclasses import dataclass, field

MAX_LINE = 1024

_ENDING = re.compile(rb"\r\n|\r|\n")
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")

# The commands that exist outside a room and in one (QUIT in both).
OUTSIDE = frozenset({"CREATE", "JOIN", "QUIT"})
INSIDE = frozenset({"GET_STATE", "MOVE", "LEAVE", "REQUEST_A_DRAW", "CANCEL_DRAW_REQUEST", "QUIT"})
# The commands that take arguments; the others refuse any.
WITH_ARGUMENTS = frozenset({"JOIN", "MOVE"})


class Lines:
    """Cut a client's bytes into lines, whatever the packets: `feed` returns the lines completed so far."""

    def __init__(self) -> None:
        self._buffer = bytearray()
        self._after_cr = False  # the last byte seen ended a line with "\r": a "\n" right after it belongs to it
        self.too_long = False  # more than MAX_LINE bytes arrived without an ending: the connection is to be closed

    def feed(self, data: bytes) -> list[bytes]:
        if not data:
            return []
        if self._after_cr:
            self._after_cr = False
            if data[:1] == b"\n":
                data = data[1:]
        buffer = self._buffer
        buffer += data
        lines: list[bytes] = []
        start = 0
        for ending in _ENDING.finditer(buffer):
            if ending.start() - start > MAX_LINE:
                self.too_long = True
                break
            lines.append(bytes(buffer[start : ending.start()]))
            start = ending.end()
        else:
            self._after_cr = start > 0 and start == len(buffer) and buffer[start - 1 : start] == b"\r"
            if len(buffer) - start > MAX_LINE:
                self.too_long = True
        del buffer[:start]
        return lines


@dataclass(frozen=True, slots=True)
class Command:
    name: str
    arguments: list[str] = field(default_factory=list)


class Invalid(ValueError):
    """A line that is no command here: answered INVALID_SYNTAX, with `str()` as its note."""


def parse(line: bytes, *, in_room: bool) -> Command:
    """Return the command of a line, or raise Invalid: not UTF-8, empty, unknown, not for where the connection is
    (outside a room or in one), or with arguments it does not take or lacks."""
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError:
        raise Invalid("not UTF-8 text") from None
    words = [word for word in text.split(" ") if word]
    if not words:
        raise Invalid("an empty line")
    name, arguments = words[0], words[1:]
    if name not in (INSIDE if in_room else OUTSIDE):
        if name in INSIDE | OUTSIDE:
            where = "the room you are in" if in_room else "outside a room"
            raise Invalid(f"please input a valid command for {where}")
        raise Invalid("unknown command")
    if arguments and name not in WITH_ARGUMENTS:
        raise Invalid(f"{name} takes no arguments")
    if name == "JOIN" and (len(arguments) != 2 or not all(_UUID.fullmatch(word) for word in arguments)):
        raise Invalid("JOIN takes a room's UUID and a colour's UUID")
    return Command(name, arguments)


def answer(code: str, **variables: object) -> bytes:
    """Return a success: the code, then each variable as NAME=value, on one line."""
    parts = [code, *(f"{name}={value}" for name, value in variables.items())]
    return (" ".join(parts) + "\n").encode()


def failure(code: str, note: str = "") -> bytes:
    """Return a failure: the code, and a note for people after " - " (clients read the first word only)."""
    note = " ".join(note.split())[:200]
    return f"{code} - {note}\n".encode() if note else f"{code}\n".encode()


def flag(value: bool) -> str:
    return "TRUE" if value else "FALSE"
