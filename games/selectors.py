"""Reads that build what clients see of a game."""

from typing import Any
from urllib.parse import urlencode

from django.db.models import Prefetch, QuerySet
from django.urls import reverse

from .lobby import SHOWN, Seek
from .models import Game, GameEvent, Seat
from .rules import find_engine

SEATS = Prefetch("seats", queryset=Seat.objects.select_related("user").order_by("index"))
LOG = Prefetch("events", queryset=GameEvent.objects.select_related("player").order_by("seq"))


def finished_games_with_logs(
    *, kind: str | None = None, variant: str | None = None, pool: str | None = None
) -> QuerySet[Game]:
    """Return the finished games, oldest first, with their players and their logs fetched along: all of them, or
    those of a game, variant and pool."""
    games = Game.objects.filter(status=Game.Status.FINISHED).order_by("finished_at", "pk")
    for name, value in (("kind", kind), ("variant", variant), ("pool", pool)):
        if value is not None:
            games = games.filter(**{name: value})
    return games.select_related("winner").prefetch_related(SEATS, LOG)


def _nick(user) -> str | None:
    return None if user is None else user.username


def game_record(game: Game) -> dict[str, Any]:
    """Return a finished game with its whole log as plain JSON (what the export writes, one per line)."""
    return {
        "game": game.public_id,
        "kind": game.kind,
        "options": game.options,
        "pool": game.pool,
        "seats": [{"player": seat.user.username, "rank": seat.rank} for seat in game.seats.all()],
        "winner": _nick(game.winner),
        "ending": game.ending,
        "created_at": game.created_at.isoformat(),
        "started_at": game.started_at and game.started_at.isoformat(),
        "finished_at": game.finished_at and game.finished_at.isoformat(),
        "log": [
            {
                "seq": event.seq,
                "kind": event.kind,
                "player": _nick(event.player),
                "data": event.data,
                "at": event.created_at.isoformat(),
            }
            for event in game.events.all()
        ],
    }


def game_with_log(public_id: str) -> Game | None:
    """Return a game with its players, its whole log and its analysis if made, or None."""
    return (
        Game.objects.select_related("winner", "analysis")
        .prefetch_related(SEATS, LOG)
        .filter(public_id=public_id)
        .first()
    )


def started_games(*, player_id: int | None = None) -> QuerySet[Game]:
    """Return the games that started (in play or finished), newest first: all of them, or one player's."""
    games = Game.objects.filter(started_at__isnull=False)
    if player_id is not None:
        games = games.filter(pk__in=Seat.objects.filter(user_id=player_id).values("game_id"))
    return games.select_related("winner").prefetch_related(SEATS).order_by("-started_at", "-pk")


def tab_seeks() -> list[Seek]:
    """The Tâb games waiting for an opponent, oldest first: who waits, in which group, on how many columns. Joining
    one is joining the same group and size (the course's pairing), from the Tâb page."""
    waiting = (
        Seat.objects.filter(game__kind="tab", game__status=Game.Status.WAITING, index=0)
        .order_by("game__created_at")
        .values_list("user__username", "game__pool", "game__options", "game__created_at")[:SHOWN]
    )
    play = reverse("play", args=["tab"])
    return [
        Seek(
            who=nick,
            what=f"group {pool} · {options['size']} columns",
            url=f"{play}?{urlencode({'group': pool, 'size': options['size']})}",
            action=f"Play {nick}",
            since=since,
        )
        for nick, pool, options, since in waiting
        if options and options.get("size")
    ]


def games_in_progress(*, player_id: int) -> list[dict[str, Any]]:
    """Return a player's games waiting for players or in play, of every kind, newest first: what the player needs to
    go back to one (its page, its opponents, whether it is the player's turn)."""
    games = (
        Game.objects.filter(
            status__in=[Game.Status.WAITING, Game.Status.PLAYING],
            pk__in=Seat.objects.filter(user_id=player_id).values("game_id"),
        )
        .prefetch_related(SEATS)
        .order_by("-created_at", "-pk")
    )
    found = []
    for game in games:
        players = game.players
        on_turn = None
        if game.status == Game.Status.PLAYING and game.state is not None:
            engine = find_engine(game.kind)
            on_turn = engine.to_act(engine.state_from_json(game.state))
        found.append(
            {
                "game": game.public_id,
                "kind": game.kind,
                "title": game.title,
                "variant": game.variant_label,
                "pool": game.pool,
                "options": game.options,
                "status": game.status,
                "opponents": [user.username for user in players if user.pk != player_id],
                "your_turn": on_turn is not None and players[on_turn].pk == player_id,
                "resume": f"{reverse('play', args=[game.kind])}?game={game.public_id}",
                "watch": game.get_absolute_url(),
            }
        )
    return found


def game_result(public_id: str) -> dict[str, Any] | None:
    """Return how a game stands or ended, seat by seat: each player's rank and, in a rated match, their rating
    before and after it (whole numbers, as the site shows ratings)."""
    game = Game.objects.select_related("winner").prefetch_related(SEATS).filter(public_id=public_id).first()
    if game is None:
        return None
    return {
        "game": game.public_id,
        "pool": game.pool,
        "status": game.status,
        "ending": game.ending,
        "winner": _nick(game.winner),
        "seats": [
            {
                "nick": seat.user.username,
                "rank": seat.rank,
                "rating_before": None if seat.rating_before is None else round(seat.rating_before),
                "rating_after": None if seat.rating_after is None else round(seat.rating_after),
            }
            for seat in game.seats.all()
        ],
    }
