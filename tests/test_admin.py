"""The admin: people who run the server see users, games with their move log, and rankings."""

import re

import pytest
from django.contrib.auth import get_user_model

from games.models import Game, GameEvent
from rankings.models import Ranking

pytestmark = pytest.mark.django_db
User = get_user_model()


@pytest.fixture
def finished_game(api, alice, bob):
    play_alice, play_bob = api.as_player("alice"), api.as_player("bob")
    _, body = play_alice("join", group=3, size=7)
    play_bob("join", group=3, size=7)
    play_alice("roll", game=body["game"])
    play_bob("leave", game=body["game"])
    return Game.objects.get(public_id=body["game"])


def inline_cells(page: str, field: str) -> list[str]:
    """Return the text of the move log's `field` column, row by row."""
    cells = re.findall(rf'<td class="field-{field}">\s*<p>(.*?)</p>', page, re.S)
    return [re.sub(r"<[^>]+>", "", cell).strip() for cell in cells]


def test_staff_browse_games_with_their_move_log(admin_client, finished_game):
    response = admin_client.get("/admin/games/game/")
    assert response.status_code == 200
    assert finished_game.public_id in response.content.decode()
    page = admin_client.get(f"/admin/games/game/{finished_game.pk}/change/").content.decode()
    kinds = [GameEvent.Kind.CREATE.label, GameEvent.Kind.START.label, "threw the sticks", GameEvent.Kind.LEAVE.label]
    assert inline_cells(page, "seq") == ["1", "2", "3", "4"]
    assert inline_cells(page, "entry") == kinds
    assert inline_cells(page, "player") == ["alice", "bob", "alice", "bob"]


def test_games_cannot_be_edited_or_deleted_by_hand(admin_client, finished_game):
    before = Game.objects.values().get(pk=finished_game.pk)
    admin_client.post(f"/admin/games/game/{finished_game.pk}/change/", {"status": "playing", "pool": "1"})
    assert Game.objects.values().get(pk=finished_game.pk) == before
    assert admin_client.get(f"/admin/games/game/{finished_game.pk}/delete/").status_code == 403
    assert admin_client.get("/admin/games/game/add/").status_code == 403


def test_staff_browse_users_and_rankings(admin_client, finished_game):
    users = admin_client.get("/admin/auth/user/?q=ali").content.decode()
    assert "alice" in users and "bob" not in users
    rankings = admin_client.get("/admin/rankings/ranking/").content.decode()
    assert "alice" in rankings and "bob" in rankings


def test_only_staff_reach_the_admin(client, alice):
    response = client.get("/admin/games/game/")
    assert response.status_code == 302
    assert "/admin/login/" in response["Location"]


def test_staff_deactivate_an_account_and_its_api_calls_get_401(admin_client, api, alice):
    play = api.as_player("alice")
    assert play("join", group=1, size=7)[0] == 200  # the password is now remembered
    response = admin_client.post(
        "/admin/auth/user/", {"action": "deactivate", "_selected_action": [alice.pk]}, follow=True
    )
    assert "1 account(s) deactivated." in response.content.decode()
    assert play("join", group=2, size=7) == (401, {"error": "This account is disabled"})
    admin_client.post("/admin/auth/user/", {"action": "reactivate", "_selected_action": [alice.pk]})
    assert play("join", group=2, size=7)[0] == 200


def test_staff_reset_a_password(admin_client, api, alice):
    assert api.as_player("alice")("join", group=1, size=7)[0] == 200
    response = admin_client.post(
        f"/admin/auth/user/{alice.pk}/password/",
        {"password1": "new-secret-1", "password2": "new-secret-1", "usable_password": "true"},
    )
    assert response.status_code == 302
    assert api.as_player("alice")("join", group=1, size=7) == (
        401,
        {"error": "User registered with a different password"},
    )
    assert api("join", {"nick": "alice", "password": "new-secret-1", "group": 1, "size": 7})[0] == 200


def end_by_admin(admin_client, game: Game, action: str) -> str:
    response = admin_client.post("/admin/games/game/", {"action": action, "_selected_action": [game.pk]}, follow=True)
    return response.content.decode()


def test_staff_end_a_stuck_game_the_player_on_turn_loses(admin_client, api, alice, bob):
    from rankings.models import Rating

    _, body = api.as_player("alice")("join", group=3, size=7)
    api.as_player("bob")("join", group=3, size=7)
    game = Game.objects.get(public_id=body["game"])
    page = end_by_admin(admin_client, game, "end_player_on_turn_loses")
    assert "1 game(s) ended." in page
    game.refresh_from_db()
    # alice, the initial player, was on turn.
    assert (game.status, game.ending, game.winner.username) == ("finished", "ended", "bob")
    end = game.events.get(kind="end")
    assert (end.player, end.data) == (None, {"loser": 0, "winner": 1})  # the seats: alice loses, bob wins
    assert list(game.seats.order_by("index").values_list("user__username", "rank")) == [("alice", 2), ("bob", 1)]
    assert sorted(Ranking.objects.values_list("player__username", "victories", "games")) == [
        ("alice", 0, 1),
        ("bob", 1, 1),
    ]
    assert Rating.objects.get(player__username="bob").rating > 1500
    # Ending it again does nothing.
    assert "0 game(s) ended." in end_by_admin(admin_client, game, "end_with_no_result")


def test_staff_end_a_game_with_no_result(admin_client, api, alice, bob):
    _, body = api.as_player("alice")("join", group=3, size=7)
    api.as_player("bob")("join", group=3, size=7)
    game = Game.objects.get(public_id=body["game"])
    assert "1 game(s) ended." in end_by_admin(admin_client, game, "end_with_no_result")
    game.refresh_from_db()
    assert (game.status, game.ending, game.winner) == ("finished", "ended", None)
    assert not Ranking.objects.exists()
    assert api.as_player("alice")("roll", game=game.public_id) == (400, {"error": "The game is over"})


def test_staff_end_a_game_from_its_own_page_after_a_question(admin_client, client, api, alice, bob):
    _, body = api.as_player("alice")("join", group=3, size=7)
    api.as_player("bob")("join", group=3, size=7)
    game = Game.objects.get(public_id=body["game"])
    page = admin_client.get(f"/admin/games/game/{game.pk}/change/").content.decode()
    assert f"/admin/games/game/{game.pk}/end/loses/" in page and f"/admin/games/game/{game.pk}/end/no-result/" in page
    asked = admin_client.get(f"/admin/games/game/{game.pk}/end/loses/").content.decode()
    assert "the player on turn loses, and the opponent wins?" in asked
    game.refresh_from_db()
    assert game.status == "playing"  # asking changes nothing
    assert admin_client.get(f"/admin/games/game/{game.pk}/end/whatever/").status_code == 403
    assert client.post(f"/admin/games/game/{game.pk}/end/loses/").status_code == 302  # to the admin's login
    game.refresh_from_db()
    assert game.status == "playing"
    response = admin_client.post(f"/admin/games/game/{game.pk}/end/loses/", follow=True)
    assert "1 game(s) ended." in response.content.decode()
    game.refresh_from_db()
    assert (game.status, game.ending, game.winner.username) == ("finished", "ended", "bob")
    # A finished game's page offers no end.
    assert "/end/" not in admin_client.get(f"/admin/games/game/{game.pk}/change/").content.decode()


def test_the_sign_in_spends_the_addresss_hashing_budget_and_waits_in_the_hashing_gate(client, settings):
    """A stranger trying passwords at /admin/login/ (each for another name: Django hashes for unknown names too)
    meets the budget of hashes of the game API, and the same bounded queue."""
    import threading
    from datetime import UTC, datetime

    import time_machine

    from accounts import hashing

    User.objects.create_superuser("boss", password="right-password")
    settings.TAB_HASHES_PER_MINUTE = 3
    with time_machine.travel(datetime(2026, 3, 1, 12, 0, tzinfo=UTC), tick=True):
        for name in ("x1", "x2"):
            response = client.post("/admin/login/", {"username": name, "password": "guess"})
            assert response.status_code == 200 and "correct username and password" in response.content.decode()
        assert client.post("/admin/login/", {"username": "boss", "password": "right-password"}).status_code == 302
        client.logout()
        response = client.post("/admin/login/", {"username": "x3", "password": "guess"})
        assert response.status_code == 429 and response.json()["error"].startswith("Too many password checks")

    settings.TAB_HASHES_PER_MINUTE = 0
    settings.TAB_HASHING_THREADS, settings.TAB_HASHING_QUEUE = 1, 0
    release, started = threading.Event(), threading.Event()

    def busy() -> None:
        started.set()
        release.wait(30)

    holder = threading.Thread(target=hashing.gate().call, args=(busy,))
    holder.start()
    try:
        assert started.wait(30)
        response = client.post("/admin/login/", {"username": "boss", "password": "right-password"})
        assert response.status_code == 503 and response["Retry-After"] == "1"
    finally:
        release.set()
        holder.join()
    assert client.post("/admin/login/", {"username": "boss", "password": "right-password"}).status_code == 302
