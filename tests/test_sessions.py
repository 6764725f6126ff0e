"""Signing in to the site with a session: the page's own calls, signed in by a cookie instead of a nick and a password
in every body, a player's games in progress, and signing out of one session or all of them."""

import json
from datetime import timedelta

import pytest
from django.contrib.sessions.models import Session
from django.test import Client
from django.utils import timezone

from accounts import credentials
from accounts.models import SignedInSession
from accounts.services import sessions_clean, user_set_active
from games.models import Game

pytestmark = pytest.mark.django_db(transaction=True)


def post(client: Client, path: str, payload: dict | None = None) -> tuple[int, dict]:
    response = client.post(path, data=json.dumps(payload or {}), content_type="application/json")
    return response.status_code, response.json()


def sign_in(client: Client, nick: str, password: str) -> tuple[int, dict]:
    return post(client, "/account/sign-in", {"nick": nick, "password": password})


def mine(client: Client) -> dict:
    response = client.get("/account/games")
    assert response.status_code == 200
    return response.json()


def signed_in_pair() -> tuple[Client, Client]:
    alice, bob = Client(), Client()
    assert sign_in(alice, "alice", "alice-secret") == (200, {"nick": "alice"})
    assert sign_in(bob, "bob", "bob-secret") == (200, {"nick": "bob"})
    return alice, bob


def test_signing_in_makes_the_account_and_a_session_that_later_requests_are_signed_in_by(client):
    assert mine(client)["nick"] is None
    assert sign_in(client, "dora", "dora-secret") == (200, {"nick": "dora"})
    assert mine(client)["nick"] == "dora" and mine(client)["games"] == []
    # The account is the course API's too: the same nick and password play there.
    response = client.post("/register", {"nick": "dora", "password": "dora-secret"}, content_type="application/json")
    assert (response.status_code, response.json()) == (200, {})
    # Another browser has no session.
    assert mine(Client())["nick"] is None


def test_a_wrong_password_or_a_bad_nick_signs_nobody_in(client):
    assert sign_in(client, "dora", "dora-secret")[0] == 200
    other = Client()
    assert sign_in(other, "dora", "guess") == (401, {"error": "User registered with a different password"})
    assert mine(other)["nick"] is None
    status, body = sign_in(other, "", "x")
    assert status == 400 and "nick" in body["error"]
    status, body = sign_in(other, "a b", "x")
    assert status == 400 and body["error"].startswith("Invalid nick")
    status, body = post(other, "/account/sign-in", {"nick": "eve"})
    assert status == 400 and "password" in body["error"]
    response = other.post("/account/sign-in", data=b"[1", content_type="application/json")
    assert response.status_code == 400 and response.json() == {"error": "Request body is not valid JSON"}
    assert other.get("/account/sign-in").status_code == 405
    assert mine(other)["nick"] is None


def test_the_page_plays_a_whole_exchange_through_its_session(alice, bob):
    a, b = signed_in_pair()
    status, joined = post(a, "/play/tab/api/join", {"group": 4, "size": 7})
    assert status == 200
    assert post(b, "/play/tab/api/join", {"group": 4, "size": 7}) == (200, joined)
    game = joined["game"]
    listed = {client: mine(client)["games"] for client in (a, b)}
    for client, rival in ((a, "bob"), (b, "alice")):
        [entry] = listed[client]
        assert entry["game"] == game and entry["kind"] == "tab" and entry["status"] == "playing"
        assert entry["opponents"] == [rival] and entry["pool"] == "4" and entry["options"] == {"size": 7}
        assert entry["resume"] == f"/play/tab/?game={game}" and entry["watch"] == f"/games/{game}/"
    # The lobby lists it too, with the link that resumes it; nobody's games for a visitor.
    lobby = a.get("/").content.decode()
    assert "Your games in progress, alice" in lobby and f'href="/play/tab/?game={game}"' in lobby
    assert "Your games in progress" not in Client().get("/").content.decode()
    # Exactly one of them is on turn; the other is refused as the course API refuses.
    assert listed[a][0]["your_turn"] != listed[b][0]["your_turn"]
    on_turn, waiting = (a, b) if listed[a][0]["your_turn"] else (b, a)
    assert post(waiting, "/play/tab/api/roll", {"game": game}) == (400, {"error": "Not your turn to play"})
    assert post(on_turn, "/play/tab/api/roll", {"game": game}) == (200, {})
    assert post(on_turn, "/play/tab/api/notify", {"game": game}) == (400, {"error": "undefined cell"})
    assert post(on_turn, "/play/tab/api/roll", {"game": "nope"})[0] == 400
    assert Game.objects.get(public_id=game).version >= 2
    # Leaving ends the game: the opponent wins, and neither has a game in progress any more.
    assert post(waiting, "/play/tab/api/leave", {"game": game}) == (200, {})
    finished = Game.objects.get(public_id=game)
    assert finished.status == Game.Status.FINISHED and finished.winner is not None
    assert mine(a)["games"] == [] and mine(b)["games"] == []


def test_without_a_session_the_page_s_calls_are_refused_and_the_course_api_ignores_sessions(client, alice):
    assert post(client, "/play/tab/api/join", {"group": 1, "size": 9}) == (
        401,
        {"error": "Sign in first: your session has ended"},
    )
    assert client.get("/play/tab/api/roll").status_code == 405
    assert sign_in(client, "alice", "alice-secret")[0] == 200
    # The course's functions still want a nick and a password in the body, session or not.
    response = client.post("/join", {"group": 1, "size": 9}, content_type="application/json")
    assert (response.status_code, response.json()) == (400, {"error": "undefined nick"})
    assert not Game.objects.exists()


def post_with_token(browser: Client, path: str, payload: dict, token: str | None = None):
    """POST as the page does, with the CSRF token (by default the one in the browser's cookie)."""
    token = browser.cookies["csrftoken"].value if token is None else token
    return browser.post(path, data=json.dumps(payload), content_type="application/json", headers={"X-CSRFToken": token})


def browser_signed_in(nick: str, password: str) -> tuple[Client, str]:
    """Return a client that checks CSRF as a browser must, signed in through the Tâb page, and the token it had."""
    browser = Client(enforce_csrf_checks=True)
    assert browser.get("/play/tab/").status_code == 200  # the page gives its token, as a cookie
    token = browser.cookies["csrftoken"].value
    assert post_with_token(browser, "/account/sign-in", {"nick": nick, "password": password}).status_code == 200
    return browser, token


def test_the_page_s_calls_need_the_csrf_token():
    assert sign_in(Client(enforce_csrf_checks=True), "dora", "dora-secret") == (
        403,
        {"error": "This page has expired: reload it and try again"},
    )
    browser, token = browser_signed_in("dora", "dora-secret")
    # Signing in gives a new token; a call with the old one is refused, with the new one it is taken.
    assert browser.cookies["csrftoken"].value != token
    assert post_with_token(browser, "/account/sign-out", {}, token).status_code == 403
    assert mine(browser)["nick"] == "dora"
    assert post_with_token(browser, "/account/sign-out", {}).status_code == 200
    assert mine(browser)["nick"] is None


def test_signing_out_ends_one_session_and_signing_out_everywhere_ends_them_all(alice):
    laptop, phone, tablet = Client(), Client(), Client()
    for device in (laptop, phone, tablet):
        assert sign_in(device, "alice", "alice-secret")[0] == 200
    assert SignedInSession.objects.filter(user=alice).count() == 3
    assert post(tablet, "/account/sign-out") == (200, {})
    assert mine(tablet)["nick"] is None and mine(laptop)["nick"] == "alice"
    assert SignedInSession.objects.filter(user=alice).count() == 2
    assert post(phone, "/account/sign-out-everywhere") == (200, {"sessions": 2})
    assert mine(laptop)["nick"] is None and mine(phone)["nick"] is None
    assert not SignedInSession.objects.exists()
    assert post(phone, "/account/sign-out-everywhere") == (401, {"error": "You are not signed in"})
    assert post(laptop, "/play/tab/api/join", {"group": 1, "size": 9})[0] == 401


def test_a_deactivated_account_s_sessions_no_longer_sign_it_in(alice):
    device = Client()
    assert sign_in(device, "alice", "alice-secret")[0] == 200
    user_set_active(user_ids=[alice.pk], active=False)
    assert mine(device)["nick"] is None
    assert post(device, "/play/tab/api/join", {"group": 1, "size": 9})[0] == 401
    assert sign_in(device, "alice", "alice-secret") == (401, {"error": "This account is disabled"})


def test_the_notes_of_sessions_that_ended_are_cleaned_and_those_of_live_sessions_kept(alice, settings):
    ended, live = Client(), Client()
    for device in (ended, live):
        assert sign_in(device, "alice", "alice-secret")[0] == 200
    long_ago = timezone.now() - timedelta(seconds=settings.SESSION_COOKIE_AGE + 60)
    SignedInSession.objects.update(signed_in_at=long_ago)
    Session.objects.filter(session_key=ended.session.session_key).delete()  # expired and cleared by the engine
    assert sessions_clean() == 1
    assert list(SignedInSession.objects.values_list("session_key", flat=True)) == [live.session.session_key]
    assert mine(live)["nick"] == "alice"


def test_signing_in_over_another_account_is_noted_and_keeps_the_course_api_fast(alice, bob):
    device = Client()
    assert sign_in(device, "alice", "alice-secret")[0] == 200
    assert sign_in(device, "bob", "bob-secret")[0] == 200
    assert SignedInSession.objects.filter(user=bob, session_key=device.session.session_key).exists()
    # The site's sign-in saved bob's last sign-in time, not his password: the pair it verified stays remembered.
    assert credentials.remembered_user_id("bob", "bob-secret") == bob.pk
    assert post(device, "/account/sign-out-everywhere") == (200, {"sessions": 1})
    assert mine(device)["nick"] is None
