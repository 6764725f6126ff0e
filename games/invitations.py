"""Invitations: a match between friends, without the pairing of strangers. A player invites whoever opens a link, or
one player (a rematch, from the end of a match); the match starts, both seated, when the invitation is accepted.

Every write here runs in a transaction with the invitation's row locked, so that two answers to one invitation (two
friends opening the link at once, an acceptance and a cancellation) cannot both take effect.
"""

from datetime import datetime, timedelta
from typing import Any

from django.db import transaction
from django.utils import timezone

from core.errors import Refusal

from . import services
from .models import Game, Invitation
from .rules import find_engine, labels

# An invitation nobody answers lapses: the inviter's page stops waiting for it.
LIFETIME = timedelta(minutes=30)

# The games whose matches between accounts are played on the site's pages, where an invitation leads: each game's app
# adds its own (the others seat their players through their protocols: rooms, tables, tournaments).
INVITABLE: set[str] = set()


class InvitationError(Refusal):
    """An invitation that cannot be answered so (str() is the message for the player)."""


def _locked(token: str) -> Invitation:
    invitation = Invitation.objects.select_for_update().select_related("inviter").filter(token=token).first()
    if invitation is None:
        raise InvitationError("No such invitation: check the link", status=404)
    return invitation


def _lapsed(invitation: Invitation, now: datetime) -> bool:
    return invitation.status == Invitation.Status.OPEN and invitation.expires_at <= now


def _open(invitation: Invitation, now: datetime) -> None:
    """Refuse unless the invitation may still be answered."""
    if _lapsed(invitation, now):
        raise InvitationError("This invitation has expired: ask for a new one")
    if invitation.status != Invitation.Status.OPEN:
        raise InvitationError(f"This invitation was {invitation.get_status_display()} already")


def _accept(invitation: Invitation, user_id: int, now: datetime) -> Invitation:
    """Start the match of an open invitation between its inviter and `user_id`, each withdrawn from a match they
    waited in, as a join elsewhere withdraws them. The inviter plays first, except in a rematch, where whoever played
    second in the last match begins."""
    if not invitation.inviter.is_active:
        raise InvitationError("The player who invited you can no longer play")
    for player in sorted((invitation.inviter_id, user_id)):  # the users' rows locked in one order
        services.withdraw_elsewhere(player, now)
    seats = [invitation.inviter_id, user_id]
    previous = invitation.rematch_of
    if previous is not None and previous.seat_user_ids[:1] == [invitation.inviter_id]:
        seats.reverse()
    match = services.match_open(kind=invitation.kind, options=invitation.options, user_ids=seats, pool=invitation.pool)
    game = services.match_start(public_id=match.public_id, user_id=user_id)
    invitation.status, invitation.game = Invitation.Status.ACCEPTED, game
    invitation.save(update_fields=["status", "game"])
    return invitation


def invitation_open(*, user_id: int, kind: str, options: dict, pool: str) -> Invitation:
    """Invite whoever opens the invitation's link to a match of `kind` with these options, in `pool` (Tâb: the
    course group its result counts in). A player has one open invitation at a time: this one replaces the others."""
    if kind not in INVITABLE:
        raise InvitationError(f"No invitations to {find_engine(kind).title}: its players meet through its own page")
    engine = find_engine(kind)
    try:
        options = engine.options(options)
    except ValueError as error:
        raise InvitationError(str(error)) from None
    now = timezone.now()
    with transaction.atomic():
        # Two invitations of one player at once: one after the other, the second replacing the first.
        services.account_lock(user_id)
        Invitation.objects.filter(inviter_id=user_id, status=Invitation.Status.OPEN).update(
            status=Invitation.Status.CANCELLED
        )
        return Invitation.objects.create(
            kind=kind, options=options, pool=pool, inviter_id=user_id, created_at=now, expires_at=now + LIFETIME
        )


def rematch_offer(*, user_id: int, public_id: str) -> Invitation:
    """Offer the opponent of a finished match for two a match like it (same game, options and pool). If the opponent
    offered one already, that offer is accepted instead: the match starts."""
    now = timezone.now()
    with transaction.atomic():
        # The game's row locked: the two players' offers, made at once, take turns, and the second accepts the first.
        game = Game.objects.select_for_update().filter(public_id=public_id).first()
        if game is None or user_id not in game.seat_user_ids:
            raise InvitationError("That is not one of your games", status=404)
        if game.status != Game.Status.FINISHED:
            raise InvitationError("That game is not over yet")
        if game.kind not in INVITABLE or game.pool == "" or len(game.seat_user_ids) != 2:
            raise InvitationError("Only a game between two players online can be played again")
        [opponent] = [seat for seat in game.seat_user_ids if seat != user_id]
        # Played again already (from another tab, say): that match.
        again = Invitation.objects.filter(rematch_of=game, status=Invitation.Status.ACCEPTED).first()
        if again is not None:
            return again
        crossing = (
            Invitation.objects.select_for_update()
            .filter(status=Invitation.Status.OPEN, rematch_of=game, inviter_id=opponent, invitee_id=user_id)
            .filter(expires_at__gt=now)
            .first()
        )
        if crossing is not None:
            return _accept(crossing, user_id, now)
        services.account_lock(user_id)
        Invitation.objects.filter(inviter_id=user_id, status=Invitation.Status.OPEN).update(
            status=Invitation.Status.CANCELLED
        )
        return Invitation.objects.create(
            kind=game.kind,
            options=game.options,
            pool=game.pool,
            inviter_id=user_id,
            invitee_id=opponent,
            rematch_of=game,
            created_at=now,
            expires_at=now + LIFETIME,
        )


def invitation_accept(*, token: str, user_id: int) -> Invitation:
    """Accept an invitation: its match starts, the inviter and `user_id` seated."""
    now = timezone.now()
    with transaction.atomic():
        invitation = _locked(token)
        if invitation.inviter_id == user_id:
            raise InvitationError("This is your own invitation: send its link to a friend")
        if invitation.invitee_id not in (None, user_id):
            raise InvitationError("This invitation is for another player", status=403)
        _open(invitation, now)
        return _accept(invitation, user_id, now)


def invitation_close(*, token: str, user_id: int) -> Invitation:
    """Decline an invitation (its invitee, or anyone with its link) or cancel it (its inviter)."""
    now = timezone.now()
    with transaction.atomic():
        invitation = _locked(token)
        if invitation.invitee_id not in (None, user_id) and invitation.inviter_id != user_id:
            raise InvitationError("This invitation is for another player", status=403)
        _open(invitation, now)
        invitation.status = (
            Invitation.Status.CANCELLED if invitation.inviter_id == user_id else Invitation.Status.DECLINED
        )
        invitation.save(update_fields=["status"])
        return invitation


# What `invitation_view` reads of an invitation's relations.
_SHOWN = ("inviter", "invitee", "rematch_of", "game")


def invitation_view(invitation: Invitation, now: datetime | None = None) -> dict[str, Any]:
    """What a page shows of an invitation: who invites whom to what, and how it stands ("expired" once lapsed)."""
    now = now or timezone.now()
    title, variant = labels(invitation.kind, find_engine(invitation.kind).variant(invitation.options))
    return {
        "token": invitation.token,
        "kind": invitation.kind,
        "title": title,
        "variant": variant,
        "options": invitation.options,
        "pool": invitation.pool,
        "inviter": invitation.inviter.username,
        "invitee": None if invitation.invitee is None else invitation.invitee.username,
        "rematch_of": invitation.rematch_of.public_id if invitation.rematch_of_id else None,
        "status": "expired" if _lapsed(invitation, now) else invitation.status,
        "game": invitation.game.public_id if invitation.game_id else None,
        "expires_at": invitation.expires_at.isoformat(),
    }


def invitation_by_token(token: str) -> dict[str, Any] | None:
    invitation = Invitation.objects.select_related(*_SHOWN).filter(token=token).first()
    return None if invitation is None else invitation_view(invitation)


def invitations_of(user_id: int) -> dict[str, list[dict[str, Any]]]:
    """The open invitations a player sent, and those sent to them (rematches)."""
    now = timezone.now()
    open_ = Invitation.objects.filter(status=Invitation.Status.OPEN, expires_at__gt=now).select_related(*_SHOWN)
    return {
        "sent": [invitation_view(invitation, now) for invitation in open_.filter(inviter_id=user_id)],
        "received": [invitation_view(invitation, now) for invitation in open_.filter(invitee_id=user_id)],
    }


def rematch_offered(*, user_id: int, public_id: str) -> dict[str, Any] | None:
    """The opponent's open offer to play a finished game again, made to this player, or None."""
    offer = (
        Invitation.objects.filter(
            status=Invitation.Status.OPEN,
            expires_at__gt=timezone.now(),
            invitee_id=user_id,
            rematch_of__public_id=public_id,
        )
        .select_related(*_SHOWN)
        .first()
    )
    return None if offer is None else invitation_view(offer)
