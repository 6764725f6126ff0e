"""The admin: people who run the server see users, games with their move log, and rankings."""

import pytest

from games.models import Game

pytestmark = pytest.mark.django_db


@pytest.fixture
def finished_game(api, alice, bob):
    play_alice, play_bob = api.as_player("alice"), api.as_player("bob")
    _, body = play_alice("join", group=3, size=7)
    play_bob("join", group=3, size=7)
    play_alice("roll", game=body["game"])
    play_bob("leave", game=body["game"])
    return Game.objects.get(public_id=body["game"])


def test_staff_browse_games_with_their_move_log(admin_client, finished_game):
    response = admin_client.get("/admin/games/game/")
    assert response.status_code == 200
    assert finished_game.public_id in response.content.decode()
    page = admin_client.get(f"/admin/games/game/{finished_game.pk}/change/").content.decode()
    for kind in ("create", "start", "throw", "leave"):
        assert f'<td class="field-kind"><p>{kind}</p></td>' in page or kind in page
    assert "alice" in page and "bob" in page


def test_games_cannot_be_edited_or_deleted_by_hand(admin_client, finished_game):
    before = Game.objects.values().get(pk=finished_game.pk)
    admin_client.post(f"/admin/games/game/{finished_game.pk}/change/", {"status": "playing", "group": 1})
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
