"""Spectators end to end, against a real uvicorn process: a game watched through its own stream gets the same
snapshots as the players, and an administrator who ends a stuck game informs every stream."""

import os
import random
import re
import subprocess
import sys

import pytest

from .live import ROOT, Server, live_secret_key, next_action

pytestmark = pytest.mark.server

PASSWORD = "secret"


def pair(server: Server, size: int = 7) -> str:
    for nick in ("zp", "jpleal"):
        assert server.call("register", nick=nick, password=PASSWORD) == (200, {})
    _, body = server.call("join", nick="zp", password=PASSWORD, group=42, size=size)
    assert server.call("join", nick="jpleal", password=PASSWORD, group=42, size=size) == (200, body)
    return body["game"]


def test_a_spectator_sees_what_the_players_see(start_server):
    server = start_server()
    game = pair(server)
    zp, spectator = server.stream("zp", game), server.watch(game)
    assert spectator.status == 200 and spectator.headers["content-type"].startswith("text/event-stream")
    rng = random.Random(8)
    message = zp.next()
    assert spectator.next() == message
    for _ in range(30):
        function, payload = next_action(message, rng)
        assert server.call(function, nick=message["turn"], password=PASSWORD, game=game, **payload)[0] == 200
        message = zp.next()
        assert spectator.next() == message
    assert spectator.event_ids == zp.event_ids
    # The spectator cannot act: its stream is read-only, and the players' `update` is refused to outsiders.
    assert server.http.get("/update", params={"nick": "someone", "game": game}).status_code == 400
    assert server.call("leave", nick="zp", password=PASSWORD, game=game) == (200, {})
    final = spectator.next()
    assert final == zp.next() and final["winner"] == "jpleal"
    assert spectator.next() is spectator.END
    # Watching a finished game gives its last snapshot, then the end.
    late = server.watch(game)
    assert late.next() == final and late.next() is late.END
    for stream in (zp, spectator, late):
        stream.close()
    # Only GET opens a stream, as for `update`.
    for method in ("POST", "DELETE", "HEAD"):
        response = server.http.request(method, f"/games/{game}/stream")
        assert response.status_code == 405, method
        assert method == "HEAD" or response.json() == {"error": f"Method {method} not allowed: use GET"}


def test_an_admin_ends_a_stuck_game_and_every_stream_is_told(start_server, live_databases, tmp_path):
    database = live_databases.new()
    server = start_server(database)
    subprocess.run(
        [sys.executable, "manage.py", "createsuperuser", "--noinput", "--username", "root", "--email", ""],
        cwd=ROOT,
        env={
            **os.environ,
            "DATABASE_URL": database,
            "TAB_VAR_DIR": str(tmp_path),
            "SECRET_KEY": live_secret_key(database),
            "DJANGO_SUPERUSER_PASSWORD": "root-secret",
            # The server under test knows only this hasher (see live.Server).
            "PASSWORD_HASHERS": "django.contrib.auth.hashers.MD5PasswordHasher",
        },
        check=True,
        capture_output=True,
    )
    game = pair(server)
    zp, jpleal, spectator = server.stream("zp", game), server.stream("jpleal", game), server.watch(game)
    for stream in (zp, jpleal, spectator):
        assert stream.next()["turn"] == "zp"

    http = server.http
    http.get("/admin/login/")
    login = {"username": "root", "password": "root-secret", "next": "/admin/"}
    response = http.post("/admin/login/", data={**login, "csrfmiddlewaretoken": http.cookies["csrftoken"]})
    assert response.status_code == 302
    changelist = http.get("/admin/games/game/", params={"q": game}).text
    pk = re.search(r"/admin/games/game/(\d+)/change/", changelist).group(1)
    response = http.post(
        "/admin/games/game/",
        data={
            "action": "end_player_on_turn_loses",
            "_selected_action": pk,
            "csrfmiddlewaretoken": http.cookies["csrftoken"],
        },
    )
    assert response.status_code == 302

    finals = [stream.next() for stream in (zp, jpleal, spectator)]
    assert all(final == finals[0] for final in finals) and finals[0]["winner"] == "jpleal"
    assert all(stream.next() is stream.END for stream in (zp, jpleal, spectator))
    _, ranking = server.call("ranking", group=42, size=7)
    assert ranking == {
        "ranking": [{"nick": "jpleal", "victories": 1, "games": 1}, {"nick": "zp", "victories": 0, "games": 1}]
    }
    for stream in (zp, jpleal, spectator):
        stream.close()
