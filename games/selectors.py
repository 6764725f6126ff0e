"""Reads that build what clients see of a game."""

from typing import Any

from django.db.models import Prefetch, Q, QuerySet

from accounts.nicks import nick_of

from .models import Game, GameEvent
from .rules import tab


def game_snapshot(game: Game, state: tab.State | None = None) -> dict:
    """Return the full state of a started game as the update stream sends it (without `winner`); `state`, when
    given, is the rules state of `game.state`, already decoded."""
    if state is None:
        state = tab.State.from_json(game.state)
    nicks = {tab.BLUE: nick_of(game.initial_player_id), tab.RED: nick_of(game.second_player_id)}
    snapshot = {
        "pieces": [piece.to_json() if piece else None for piece in state.pieces],
        "initial": nicks[tab.BLUE],
        "players": {nicks[tab.BLUE]: tab.BLUE, nicks[tab.RED]: tab.RED},
        "turn": nicks[state.turn],
        "step": state.step,
        "dice": state.dice.to_json() if state.dice else None,
        "mustPass": nicks[state.turn] if state.must_pass else None,
    }
    # A game ended off the board (left, out of time, ended by an administrator) ends on no play of a piece: clients
    # of the course server read `cell`/`selected` as "a piece was just selected or moved".
    forfeited = game.status == Game.Status.FINISHED and game.ending != Game.Ending.WIN
    if state.cell is not None and not forfeited:
        snapshot["cell"] = state.cell
    if state.selected is not None and not forfeited:
        snapshot["selected"] = list(state.selected)
    return snapshot


def game_message(game: Game, state: tab.State | None = None) -> dict | None:
    """Return the update message for the game's current version, or None while it waits for an opponent."""
    if game.status == Game.Status.WAITING:
        return None
    if game.state is None:
        # Ended while waiting: there is no board to show.
        return {"winner": None}
    message = game_snapshot(game, state)
    if game.status == Game.Status.FINISHED:
        message["winner"] = None if game.winner_id is None else nick_of(game.winner_id)
    return message


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


def watched_game(public_id: str) -> Game | None:
    """Return the game a spectator's stream follows (only its key is needed), or None."""
    return Game.objects.only("pk", "public_id").filter(public_id=public_id).first()
