"""Hostile input beyond what the fuzzing covers: the nick rule at register, bodies over the size limit, and paths and
methods the API does not have. Every answer is a JSON error, and nothing is written."""

import pytest
from django.contrib.auth import get_user_model

from .factories import UserFactory

pytestmark = pytest.mark.django_db

User = get_user_model()

NICK_RULE = "Invalid nick: a nick is 1 to 32 letters, digits, '.', '_' or '-'"


@pytest.mark.parametrize(
    "nick", ["zp", "jpleal", "Élodie", "张伟", "Jürgen_2", "a.b-c_d", "0", "x" * 32, "ΑΒΓ", "иван", "_-."]
)
def test_register_accepts_nicks_of_letters_digits_and_dot_underscore_dash(api, nick):
    assert api("register", {"nick": nick, "password": "secret"}) == (200, {})
    assert User.objects.filter(username=nick).exists()


@pytest.mark.parametrize(
    "nick", ["a b", " zp", "zp ", "a@b", "a+b", "<script>", "a/b", "🎲", "tab\t", "x\ny", "e\u0301", "a'b", "%41"]
)
def test_register_refuses_other_nicks_with_the_rule(api, nick):
    assert api("register", {"nick": nick, "password": "secret"}) == (400, {"error": NICK_RULE})
    assert not User.objects.exists()


def test_accounts_older_than_the_rule_keep_working(api):
    UserFactory(username="old timer", password="secret")
    assert api("register", {"nick": "old timer", "password": "secret"}) == (200, {})
    assert api("register", {"nick": "old timer", "password": "wrong"}) == (
        401,
        {"error": "User registered with a different password"},
    )
    status, body = api("join", {"nick": "old timer", "password": "secret", "group": 1, "size": 9})
    assert status == 200 and "game" in body


def test_other_functions_answer_unknown_nicks_as_before(api):
    for nick in ("nobody", "a b", "🎲"):
        assert api("join", {"nick": nick, "password": "secret", "group": 1, "size": 9}) == (
            401,
            {"error": "User not registered"},
        )


@pytest.mark.parametrize("function", ["register", "join", "notify"])
def test_a_body_over_64_kib_is_refused_with_413(api, settings, function):
    assert settings.TAB_MAX_BODY_BYTES == 64 * 1024
    start, end = b'{"nick": "zp", "password": "secret"', b"}"
    fits = start + b" " * (64 * 1024 - len(start) - len(end)) + end
    assert api(function, raw=fits)[0] != 413
    users = User.objects.count()
    status, body = api(function, raw=fits[:-1] + b" }")
    assert (status, list(body)) == (413, ["error"]) and body["error"] == "Request body too large"
    assert User.objects.count() == users


# --- Against a real server: what reaches it before Django does ----------------------------------------------------


def raw_request(server, request: bytes) -> tuple[int, bytes]:
    """Send bytes as they are; return the status and the body (chunked bodies joined)."""
    import socket

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


@pytest.mark.server
def test_oversized_bodies_are_refused_before_they_are_read(start_server):
    import json

    server = start_server()
    limit = 64 * 1024
    # Announced too large: refused at once, without waiting for (or reading) the body.
    status, body = raw_request(
        server, b"POST /register HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1000000000\r\n\r\n{"
    )
    assert (status, json.loads(body)) == (413, {"error": f"Request body too large: at most {limit} bytes"})

    # Chunked, no length: refused as soon as it grows past the limit.
    def chunks(total: int):
        yield b'{"nick": "zp", "password": "secret"'
        for _ in range(total // 4096):
            yield b" " * 4096
        yield b"}"

    response = server.http.post("/register", content=chunks(2 * limit))
    assert (response.status_code, response.json()) == (413, {"error": f"Request body too large: at most {limit} bytes"})
    assert response.headers["access-control-allow-origin"] == "*"
    # Chunked and small enough: served.
    assert server.http.post("/register", content=chunks(limit // 2)).json() == {}
    assert server.call("register", nick="zp", password="secret") == (200, {})


@pytest.mark.server
def test_unknown_paths_and_methods_get_json_errors(start_server):
    import json

    server = start_server()
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
