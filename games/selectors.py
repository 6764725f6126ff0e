"""Reads that build what clients see of a game."""

from typing import Any

from django.db.models import Prefetch, Q, QuerySet

from .models import Game, GameEvent


def finished_games_with_logs(*, group: int | None = None, size: int | None = None) -> QuerySet[Game]:
    """Return the finished games, oldest first, with their players and their logs fetched along."""
    games = Game.objects.filter(status=Game.Status.FINISHED).order_by("finished_at", "pk")
    if group is not None:
        games = games.filter(group=group)
    if size is not None:
        games = games.filter(size=size)
    return games.select_related("initial_player", "second_player", "winner").prefetch_related(
        Prefetch("events", queryset=GameEvent.objects.select_related("player").order_by("seq"))
    )


def _nick(user) -> str | None:
    return None if user is None else user.username


def game_record(game: Game) -> dict[str, Any]:
    """Return a finished game with its whole log as plain JSON (what the export writes, one per line)."""
    return {
        "game": game.public_id,
        "group": game.group,
        "size": game.size,
        "initial": game.initial_player.username,
        "second": _nick(game.second_player),
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
    """Return a game with its players and its whole log, or None."""
    return (
        Game.objects.select_related("initial_player", "second_player", "winner")
        .prefetch_related(Prefetch("events", queryset=GameEvent.objects.select_related("player").order_by("seq")))
        .filter(public_id=public_id)
        .first()
    )


def started_games(*, player_id: int | None = None) -> QuerySet[Game]:
    """Return the games that started (in play or finished), newest first: all of them, or one player's."""
    games = Game.objects.filter(started_at__isnull=False)
    if player_id is not None:
        games = games.filter(Q(initial_player_id=player_id) | Q(second_player_id=player_id))
    return games.select_related("initial_player", "second_player", "winner").order_by("-started_at", "-pk")
