"""Invitations between friends and rematches, through the site's calls as its page makes them."""

import json
from datetime import timedelta

import pytest
from django.test import Client

from games.models import Game, Invitation
from games.services import game_leave

from .test_sessions import browser_signed_in, mine, post, post_with_token, sign_in

pytestmark = pytest.mark.django_db(transaction=True)


def signed_in(nick: str) -> Client:
    client = Client()
    assert sign_in(client, nick, f"{nick}-secret")[0] == 200
    return client


def invite(client: Client, **payload) -> tuple[int, dict]:
    return post(client, "/play/invitations", payload)


def test_a_friend_opening_the_link_starts_the_match_with_both_seated(alice, bob, charlie):
    a, b = signed_in("alice"), signed_in("bob")
    status, sent = invite(a, kind="tab", options={"size": 7}, group=3)
    assert status == 200
    assert {key: sent[key] for key in ("kind", "title", "variant", "pool", "inviter", "invitee", "status", "game")} == {
        "kind": "tab",
        "title": "Tâb",
        "variant": "7 columns",
        "pool": "3",
        "inviter": "alice",
        "invitee": None,
        "status": "open",
        "game": None,
    }
    token = sent["token"]
    # Strangers joining group 3 on 7 columns are not paired into it.
    status, joined = post(signed_in("charlie"), "/play/tab/api/join", {"group": 3, "size": 7})
    assert status == 200 and Game.objects.get(public_id=joined["game"]).status == Game.Status.WAITING
    # Anyone with the link sees it, signed in or not; alice cannot accept her own.
    assert Client().get(f"/play/invitations/{token}").json()["inviter"] == "alice"
    assert post(a, f"/play/invitations/{token}/accept")[1] == {
        "error": "This is your own invitation: send its link to a friend"
    }
    assert post(Client(), f"/play/invitations/{token}/accept") == (401, {"error": "Log in first to invite or answer"})
    assert mine(a)["invitations"]["sent"][0]["token"] == token
    status, accepted = post(b, f"/play/invitations/{token}/accept")
    assert status == 200 and accepted["status"] == "accepted"
    game = Game.objects.get(public_id=accepted["game"])
    assert game.status == Game.Status.PLAYING and game.pool == "3" and game.options == {"size": 7}
    assert [user.username for user in game.players] == ["alice", "bob"]  # the inviter plays first
    # The inviter's page learns it from the invitation; the game is in both players' lists.
    assert a.get(f"/play/invitations/{token}").json()["game"] == game.public_id
    assert [entry["game"] for entry in mine(a)["games"]] == [game.public_id]
    assert [entry["game"] for entry in mine(b)["games"]] == [game.public_id]
    assert mine(a)["invitations"] == {"sent": [], "received": []}
    # Answered once: a second friend is too late.
    assert post(signed_in("charlie"), f"/play/invitations/{token}/accept") == (
        400,
        {"error": "This invitation was accepted already"},
    )


def test_bad_invitations_are_refused_and_change_nothing(alice):
    a = signed_in("alice")
    assert invite(a, kind="tab", options={"size": 8}, group=1)[0] == 400
    assert invite(a, kind="chess", options={}, group=1)[1] == {"error": "No such game: 'chess'"}
    assert invite(a, kind="fish", options={}, group=1)[1] == {
        "error": "No invitations to Hey, That's My Fish!: its players meet through its own page"
    }
    assert invite(a, kind="tab", options={"size": 7}, group=0) == (
        400,
        {"error": "The group must be a whole number, 1 or more"},
    )
    assert invite(a, kind="tab", options=[7], group=1) == (400, {"error": "options must be a JSON object"})
    response = a.post("/play/invitations", data=b"{", content_type="application/json")
    assert response.status_code == 400
    assert invite(Client(), kind="tab", options={"size": 7}, group=1)[0] == 401
    assert a.get("/play/invitations/nope").status_code == 404
    assert post(a, "/play/invitations/nope/accept")[0] == 404
    assert not Invitation.objects.exists()


def test_an_invitation_is_cancelled_declined_replaced_or_lapses(alice, bob):
    a, b = signed_in("alice"), signed_in("bob")
    first = invite(a, kind="tab", options={"size": 7}, group=1)[1]["token"]
    second = invite(a, kind="tab", options={"size": 9}, group=1)[1]["token"]
    # One open invitation a player: the second replaced the first.
    assert post(b, f"/play/invitations/{first}/accept")[1] == {"error": "This invitation was cancelled already"}
    assert post(b, f"/play/invitations/{second}/decline")[1]["status"] == "declined"
    assert a.get(f"/play/invitations/{second}").json()["status"] == "declined"
    third = invite(a, kind="tab", options={"size": 9}, group=1)[1]["token"]
    assert post(a, f"/play/invitations/{third}/cancel")[1]["status"] == "cancelled"
    fourth = invite(a, kind="tab", options={"size": 9}, group=1)[1]["token"]
    Invitation.objects.filter(token=fourth).update(expires_at=Invitation.objects.get(token=fourth).created_at)
    assert a.get(f"/play/invitations/{fourth}").json()["status"] == "expired"
    assert post(b, f"/play/invitations/{fourth}/accept")[1] == {
        "error": "This invitation has expired: ask for a new one"
    }
    assert post(b, f"/play/invitations/{fourth}/whatever")[0] == 404
    assert not Game.objects.exists()


def test_a_rematch_swaps_who_begins_and_two_offers_that_cross_start_one_match(alice, bob, charlie):
    a, b = signed_in("alice"), signed_in("bob")
    first = invite(a, kind="tab", options={"size": 7}, group=5)[1]["token"]
    game = post(b, f"/play/invitations/{first}/accept")[1]["game"]
    assert invite(a, rematch=game)[1] == {"error": "That game is not over yet"}
    game_leave(public_id=game, user_id=bob.pk)
    # bob offers; alice sees the offer in her list; charlie may not answer it.
    offer = invite(b, rematch=game)[1]
    assert (offer["invitee"], offer["rematch_of"], offer["status"]) == ("alice", game, "open")
    assert [entry["token"] for entry in mine(a)["invitations"]["received"]] == [offer["token"]]
    assert post(signed_in("charlie"), f"/play/invitations/{offer['token']}/accept") == (
        403,
        {"error": "This invitation is for another player"},
    )
    assert invite(signed_in("charlie"), rematch=game) == (404, {"error": "That is not one of your games"})
    # alice asks too, not knowing: bob's offer is accepted, one match starts, bob (second last time) begins.
    both = invite(a, rematch=game)[1]
    assert both["token"] == offer["token"] and both["status"] == "accepted"
    rematch = Game.objects.get(public_id=both["game"])
    assert [user.username for user in rematch.players] == ["bob", "alice"]
    assert (rematch.pool, rematch.options, rematch.status) == ("5", {"size": 7}, Game.Status.PLAYING)
    assert Invitation.objects.filter(status=Invitation.Status.OPEN).count() == 0
    assert b.get(f"/play/invitations/{offer['token']}").json()["game"] == rematch.public_id


def test_the_invitation_calls_need_the_csrf_token(alice):
    browser, _ = browser_signed_in("alice", "alice-secret")
    body = json.dumps({"kind": "tab", "options": {"size": 7}, "group": 1})
    assert browser.post("/play/invitations", data=body, content_type="application/json").status_code == 403
    response = post_with_token(browser, "/play/invitations", {"kind": "tab", "options": {"size": 7}, "group": 1})
    assert response.status_code == 200
    assert Invitation.objects.get().expires_at - Invitation.objects.get().created_at == timedelta(minutes=30)


def test_the_admin_lists_invitations_read_only(admin_client, alice):
    a = signed_in("alice")
    token = invite(a, kind="tab", options={"size": 7}, group=2)[1]["token"]
    listing = admin_client.get("/admin/games/invitation/", {"q": "alice"})
    assert listing.status_code == 200 and token in listing.content.decode()
    pk = Invitation.objects.get(token=token).pk
    assert admin_client.get(f"/admin/games/invitation/{pk}/change/").status_code == 200
    admin_client.post(f"/admin/games/invitation/{pk}/change/", {"status": "accepted"})
    assert Invitation.objects.get(pk=pk).status == Invitation.Status.OPEN
    assert admin_client.get("/admin/games/invitation/add/").status_code == 403


def test_accepting_withdraws_both_players_from_the_matches_they_waited_in(alice, bob):
    a, b = signed_in("alice"), signed_in("bob")
    a_waited = post(a, "/play/tab/api/join", {"group": 8, "size": 9})[1]["game"]
    b_waited = post(b, "/play/tab/api/join", {"group": 9, "size": 9})[1]["game"]
    token = invite(a, kind="tab", options={"size": 7}, group=3)[1]["token"]
    game = post(b, f"/play/invitations/{token}/accept")[1]["game"]
    for waiting in (a_waited, b_waited):
        assert Game.objects.get(public_id=waiting).status == Game.Status.FINISHED
    assert Game.objects.get(public_id=game).status == Game.Status.PLAYING


def test_an_inactive_inviter_s_invitation_cannot_be_accepted(alice, bob):
    token = invite(signed_in("alice"), kind="tab", options={"size": 7}, group=3)[1]["token"]
    alice.is_active = False
    alice.save()
    assert post(signed_in("bob"), f"/play/invitations/{token}/accept") == (
        400,
        {"error": "The player who invited you can no longer play"},
    )
    assert not Game.objects.exists()


def test_a_rematch_offer_is_found_by_its_game_and_a_game_is_played_again_once(alice, bob):
    a, b = signed_in("alice"), signed_in("bob")
    token = invite(a, kind="tab", options={"size": 7}, group=5)[1]["token"]
    game = post(b, f"/play/invitations/{token}/accept")[1]["game"]
    game_leave(public_id=game, user_id=bob.pk)
    assert a.get("/play/invitations", {"rematch_of": game}).json() == {"offer": None}
    offer = invite(b, rematch=game)[1]
    assert a.get("/play/invitations", {"rematch_of": game}).json()["offer"]["token"] == offer["token"]
    assert b.get("/play/invitations", {"rematch_of": game}).json() == {"offer": None}  # bob's own is not offered him
    accepted = post(a, f"/play/invitations/{offer['token']}/accept")[1]
    # From a stale end card in another tab: the same rematch, not a second one.
    assert invite(b, rematch=game)[1]["game"] == accepted["game"]
    assert invite(a, rematch=game)[1]["game"] == accepted["game"]
    assert Game.objects.filter(status=Game.Status.PLAYING).count() == 1


def test_odd_bodies_get_json_errors(alice):
    a = signed_in("alice")
    assert invite(a, kind=[], options={}, group=1) == (400, {"error": "No such game: []"})
    response = a.post("/play/invitations", data=b"[" * 60_000, content_type="application/json")
    assert (response.status_code, response.json()) == (400, {"error": "Request body is not valid JSON"})
    assert invite(a, kind="tab", options={"size": 7}, group=902) == (
        400,
        {"error": "Group 902 is for practice against the computer: choose another"},
    )
    assert a.put("/play/invitations").status_code == 405
