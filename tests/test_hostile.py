"""Hostile input beyond what the fuzzing covers, against a real server process (the production handler and database
thread): the nick rule at register, bodies over the size limit, and paths and methods the API does not have. Every
answer is a JSON error, and nothing is written."""

import json
import socket

import pytest
from django.contrib.auth.hashers import make_password

from .faults import query
from .live import Server

pytestmark = pytest.mark.server

NICK_RULE = (
    "Invalid nick: a nick is 1 to 32 letters, digits, '.', '_' or '-', without look-alike letters of another script"
)
LIMIT = 64 * 1024
TOO_LARGE = {"error": f"Request body too large: at most {LIMIT} bytes"}


@pytest.fixture(scope="module")
def server(live_databases, tmp_path_factory):
    """One server for the module: each test uses nicks of its own."""
    server = Server(
        live_databases.new(),
        tmp_path_factory.mktemp("hostile"),
        TAB_REGISTER_PER_MINUTE="0",
        TAB_LOGIN_FAILURES_PER_MINUTE="0",
    )
    yield server
    server.stop()


def nicks_stored(server: Server, *nicks: str) -> list[str]:
    placeholders = ", ".join(["%s"] * len(nicks))
    rows = query(server.database_url, f"SELECT username FROM auth_user WHERE username IN ({placeholders})", nicks)
    return sorted(nick for (nick,) in rows)


@pytest.mark.parametrize(
    "nick",
    [
        *("zp", "jpleal", "Élodie", "张伟", "Jürgen_2", "a.b-c_d", "0", "x" * 32, "ΑΒΓ", "иван", "_-."),
        # Letters with combining marks: decomposed accents, Devanagari and Tamil vowel signs.
        *("e\u0301", "N\u0303andu\u0301", "हिन्दी", "தமிழ்", "Кирилл"),
    ],
)
def test_register_accepts_nicks_of_letters_digits_and_dot_underscore_dash(server, nick):
    assert server.call("register", nick=nick, password="secret") == (200, {})
    assert nicks_stored(server, nick) == [nick]


@pytest.mark.parametrize(
    "nick",
    [
        *("a b", " zp", "zp ", "a@b", "a+b", "<script>", "a/b", "🎲", "tab\t", "x\ny", "\u0301e", "a'b", "%41"),
        # Latin and Cyrillic letters that look alike, mixed: a nick made to pass for another.
        *("раураl", "kiрill", "\u200bzp"),
    ],
)
def test_register_refuses_other_nicks_with_the_rule(server, nick):
    assert server.call("register", nick=nick, password="secret") == (400, {"error": NICK_RULE})
    assert nicks_stored(server, nick) == []


@pytest.mark.parametrize(
    ("first", "again"),
    [
        ("ana", "Ana"),
        ("bea", "ＢＥＡ"),  # full-width
        ("fiona", "ﬁona"),  # the ligature
        ("\u212aelvin", "kelvin"),  # the Kelvin sign
        ("김철수", "\u1100\u1175\u11b7\u110e\u1165\u11af\u1109\u116e"),  # composed, then decomposed Hangul
        ("N\u0303andu\u0301-2", "Ñandú-2"),
    ],
)
def test_a_nick_that_is_another_accounts_nick_in_other_clothes_is_refused(server, first, again):
    assert server.call("register", nick=first, password="secret") == (200, {})
    assert server.call("register", nick=again, password="secret") == (
        400,
        {"error": f"Invalid nick: the same nick as '{first}', already registered"},
    )
    assert nicks_stored(server, first, again) == [first]
    # The account itself is unchanged: registering again with its own nick is a password check, as ever.
    assert server.call("register", nick=first, password="secret") == (200, {})


def test_accounts_older_than_the_rule_keep_working(server):
    # Made before the rule existed, straight in the database, with the hasher the live servers use.
    query(
        server.database_url,
        "INSERT INTO auth_user (username, password, email, first_name, last_name, is_superuser, is_staff, is_active,"
        " date_joined) VALUES (%s, %s, '', '', '', FALSE, FALSE, TRUE, CURRENT_TIMESTAMP)",
        ("old timer", make_password("secret", hasher="md5")),
    )
    assert server.call("register", nick="old timer", password="secret") == (200, {})
    assert server.call("register", nick="old timer", password="wrong") == (
        401,
        {"error": "User registered with a different password"},
    )
    status, body = server.call("join", nick="old timer", password="secret", group=1, size=9)
    assert status == 200 and "game" in body


def test_other_functions_answer_unknown_nicks_as_before(server):
    for nick in ("nobody", "a b", "🎲"):
        assert server.call("join", nick=nick, password="secret", group=1, size=9) == (
            401,
            {"error": "User not registered"},
        )


def padded(nick: str, length: int) -> bytes:
    """A register/join/notify body for `nick`, padded with spaces to exactly `length` bytes."""
    start, end = f'{{"nick": "{nick}", "password": "secret", "group": 1, "size": 9'.encode(), b"}"
    return start + b" " * (length - len(start) - len(end)) + end


@pytest.mark.parametrize("function", ["register", "join", "notify"])
def test_a_body_over_64_kib_is_refused_with_413(server, function):
    nick = f"big-{function}"
    response = server.http.post(f"/{function}", content=padded(nick, LIMIT))
    assert response.status_code != 413, response.text
    other = f"bigger-{function}"
    response = server.http.post(f"/{function}", content=padded(other, LIMIT + 1))
    assert (response.status_code, response.json()) == (413, TOO_LARGE)
    assert nicks_stored(server, other) == []


# --- Against a real server: what reaches it before Django does ----------------------------------------------------


def raw_request(server, request: bytes) -> tuple[int, bytes]:
    """Send bytes as they are; return the status and the body (chunked bodies joined)."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
        sock.sendall(request)
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    head, _, body = answer.partition(b"\r\n\r\n")
    if b"transfer-encoding: chunked" in head.lower():
        joined, rest = b"", body
        while rest:
            size, _, rest = rest.partition(b"\r\n")
            joined, rest = joined + rest[: int(size, 16)], rest[int(size, 16) + 2 :]
        body = joined
    return int(head.split(b" ", 2)[1]), body


def test_oversized_bodies_are_refused_before_they_are_read(server):
    # Announced too large: refused at once, without waiting for (or reading) the body.
    status, body = raw_request(
        server, b"POST /register HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1000000000\r\n\r\n{"
    )
    assert (status, json.loads(body)) == (413, TOO_LARGE)

    # Chunked, no length: refused as soon as it grows past the limit.
    def chunks(total: int):
        yield b'{"nick": "zp", "password": "secret"'
        for _ in range(total // 4096):
            yield b" " * 4096
        yield b"}"

    response = server.http.post("/register", content=chunks(2 * LIMIT))
    assert (response.status_code, response.json()) == (413, TOO_LARGE)
    assert response.headers["access-control-allow-origin"] == "*"
    # Chunked and small enough: served.
    assert server.http.post("/register", content=chunks(LIMIT // 2)).json() == {}
    assert server.call("register", nick="zp", password="secret") == (200, {})


def test_unknown_paths_and_methods_get_json_errors(server):
    for path in ("/%FF", "/%C3%28", "/%00", "/register/", "//register", "/dance", "/static/none.js", "/a/b/c"):
        status, body = raw_request(
            server, f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".encode()
        )
        assert status == 404 and list(json.loads(body)) == ["error"], (path, status, body)
    for method in ("PUT", "DELETE", "PATCH", "TRACE", "GET"):
        for function in ("register", "join", "notify"):
            headers = "Host: 127.0.0.1\r\nContent-Length: 2\r\nConnection: close"
            status, body = raw_request(server, f"{method} /{function} HTTP/1.1\r\n{headers}\r\n\r\n{{}}".encode())
            assert (status, json.loads(body)) == (405, {"error": f"Method {method} not allowed: use POST"})
    status, body = raw_request(server, b"GET / HTTP/1.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n")
    assert (status, json.loads(body)) == (400, {"error": "Bad request"})


@pytest.mark.parametrize("level", [[1], {"level": 1}, True, 4, "2"])
def test_a_computer_level_that_is_no_level_is_refused_in_every_game(server, level):
    made = server.http.post("/draughts/rooms/", json={"computer": level})
    assert made.status_code == 400 and made.json() == {"error": "computer is a level: 1, 2, 3"}
    seated = server.http.post("/tables/plakoto/hostile-levels/computer", json={"level": level})
    assert seated.status_code == 400 and seated.json() == {"errormesg": "level is one of 1, 2."}
    fish = server.http.post("/tables/fish/hostile-levels/computer", json={"level": level})
    assert fish.status_code == 400 and fish.json()["error_type"] == "Tournament_Error", fish.text
