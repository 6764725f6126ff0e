"""The draughts line protocol without I/O (protocols/draughts/protocol.py), fuzzed: lines cut the same way whatever
the packets, every line either a command for where the connection is or refused with INVALID_SYNTAX."""

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocols.draughts.protocol import INSIDE, MAX_LINE, OUTSIDE, Invalid, Lines, answer, failure, parse

WORDS = ["CREATE", "JOIN", "GET_STATE", "MOVE", "LEAVE", "REQUEST_A_DRAW", "CANCEL_DRAW_REQUEST", "QUIT", "c3", "d4"]
UUID = "3f2a8c1e-5b7d-4e09-9a61-0c2d4b8e7f13"

texts = st.lists(
    st.one_of(
        st.sampled_from([*WORDS, UUID, UUID.upper(), " ", "  ", "\t", "\r", "\n", "\r\n", "é", "\x00"]), st.text()
    ),
    max_size=30,
).map("".join)
blobs = st.one_of(texts.map(lambda text: text.encode()), st.binary(max_size=300))


def cut_at_once(data: bytes) -> list[bytes]:
    """The lines of `data` as the protocol defines them: ends are \\r\\n, \\r or \\n; a last line without one waits."""
    return re.split(rb"\r\n|\r|\n", data)[:-1]


@given(blobs, st.lists(st.integers(min_value=0, max_value=300), max_size=10))
@settings(max_examples=500)
def test_lines_do_not_depend_on_the_packets(data, cuts):
    lines = Lines()
    received = []
    points = sorted({min(cut, len(data)) for cut in cuts})
    for start, end in zip([0, *points], [*points, len(data)], strict=True):
        received += lines.feed(data[start:end])
    assert received == cut_at_once(data)
    assert not lines.too_long


def test_a_cr_and_its_lf_in_two_packets_are_one_ending():
    lines = Lines()
    assert lines.feed(b"GET_STATE\r") == [b"GET_STATE"]
    assert lines.feed(b"\nLEAVE\n") == [b"LEAVE"]
    assert lines.feed(b"\r") == [b""] and lines.feed(b"") == [] and lines.feed(b"\n") == []
    assert lines.feed(b"\n") == [b""]


def test_a_line_of_1024_bytes_is_one_and_more_is_too_long():
    lines = Lines()
    assert lines.feed(b"x" * MAX_LINE + b"\n") == [b"x" * MAX_LINE] and not lines.too_long
    assert lines.feed(b"y" * MAX_LINE) == [] and not lines.too_long
    assert lines.feed(b"y") == [] and lines.too_long
    # Lines before the long one are still answered.
    lines = Lines()
    assert lines.feed(b"LEAVE\n" + b"z" * (MAX_LINE + 1) + b"\n") == [b"LEAVE"] and lines.too_long


@given(blobs, st.booleans())
@settings(max_examples=1000)
def test_a_line_is_a_command_for_its_place_or_invalid(line, in_room):
    try:
        command = parse(line, in_room=in_room)
    except Invalid as error:
        assert str(error)
        return
    assert command.name in (INSIDE if in_room else OUTSIDE)
    words = [word for word in line.decode().split(" ") if word]
    assert command.name == words[0] and command.arguments == words[1:]
    if command.name == "JOIN":
        assert len(command.arguments) == 2
    elif command.name != "MOVE":
        assert command.arguments == []


@pytest.mark.parametrize(
    "line, in_room",
    [
        (b"JOIN " + UUID.encode() + b" " + UUID.upper().encode(), False),
        (b"  CREATE  ", False),
        (b"QUIT", True),
        (b"MOVE c3 d4 e5", True),
        (b"MOVE", True),
    ],
)
def test_commands_read(line, in_room):
    assert parse(line, in_room=in_room).name == line.split()[0].decode()


def test_answers_are_one_line_ending_with_lf():
    assert answer("ROOM_JOINED") == b"ROOM_JOINED\n"
    assert answer("ROOM_CREATED", ROOM_ID=UUID) == f"ROOM_CREATED ROOM_ID={UUID}\n".encode()
    assert failure("MOVE_FAIL", "capture is\nmandatory") == b"MOVE_FAIL - capture is mandatory\n"
    assert failure("ROOM_NOT_FOUND") == b"ROOM_NOT_FOUND\n"
