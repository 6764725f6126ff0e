"""Every write to a game: pairing, throws, moves, passes, leaving and timeouts.

Each service is one transaction that takes the game row with select_for_update(), so that two requests on one
game are applied one at a time, and publishes the new snapshot only once the transaction has committed.
API views, the deadline sweeper and admin actions all call these functions; nothing else writes a game.
"""

from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Prefetch
from django.utils import timezone

from rankings.services import ranking_record, rankings_rebuild

from . import events, history, selectors, store
from .models import Game, GameEvent, WaitingRoom
from .rules import tab


class GameError(Exception):
    """An action the game refuses; str() is the message for the client (400)."""


def _deadline(now: datetime) -> datetime:
    return now + timedelta(seconds=settings.TAB_TURN_TIMEOUT)


def _locked_game(public_id: str) -> Game:
    # select_for_update(), built once (games/store.py); the players' nicks come from accounts.nicks, not a join.
    game = store.game_locked(public_id)
    if game is None:
        raise GameError("Invalid game reference")
    return game


def _player_color(game: Game, user_id: int) -> str:
    if user_id == game.initial_player_id:
        return tab.BLUE
    if user_id == game.second_player_id:
        return tab.RED
    raise GameError("You are not a player of this game")


def _playing_game(
    public_id: str, user_id: int, *, not_your_turn: str = "Not your turn to play"
) -> tuple[Game, tab.State]:
    """Lock the game, check that it is on and that this user is on turn; return it with its rules state."""
    game = _locked_game(public_id)
    color = _player_color(game, user_id)
    if game.status == Game.Status.WAITING:
        raise GameError("The game has not started: waiting for an opponent")
    if game.status == Game.Status.FINISHED:
        raise GameError("The game is over")
    state = tab.State.from_json(game.state)
    if state.turn != color:
        raise GameError(not_your_turn)
    return game, state


def _record(
    game: Game, kind: str, player_id: int | None, data: dict, now: datetime, state: tab.State | None = None
) -> None:
    """Advance the game's version, log the action under it, and publish the new snapshot after commit. `state` is
    the rules state that `game.state` was made from, if the caller has it (it need not be decoded again)."""
    game.version += 1
    if game.pk is None:
        game.save()
    else:
        store.game_save(game)
    store.event_add(game=game, kind=kind, player_id=player_id, data=data, at=now)
    message = selectors.game_message(game, state)
    if message is not None:
        public_id, version, final = game.public_id, game.version, game.status == Game.Status.FINISHED
        # robust: the move is committed whatever happens to its publication; a stream that misses it catches up
        # from the database when it reconnects.
        transaction.on_commit(lambda: events.publish(public_id, version, message, final=final), robust=True)


def _forfeit(game: Game, *, loser: str | None, ending: str, now: datetime) -> None:
    """End a game in play off the board: the opponent of `loser` wins (no one, without a loser)."""
    state = tab.State.from_json(game.state)
    # The last play is the forfeit, which involves no cell: clients must not show the previous move as new.
    state.cell = state.selected = None
    game.state = state.to_json()
    winner_id = None if loser is None else _user_of(game, tab.opponent(loser))
    _finish(game, winner_id=winner_id, ending=ending, now=now)


def _finish(game: Game, *, winner_id: int | None, ending: str, now: datetime) -> None:
    was_playing = game.status == Game.Status.PLAYING
    game.status = Game.Status.FINISHED
    game.winner_id = winner_id
    game.ending = ending
    game.finished_at = now
    game.deadline = None
    # A game in play ends without a winner only when an administrator annuls it: then it counts for no one.
    if was_playing and winner_id is not None:
        ranking_record(
            group=game.group,
            size=game.size,
            player_ids=[game.initial_player_id, game.second_player_id],
            winner_id=winner_id,
        )


def _user_of(game: Game, color: str) -> int:
    return game.initial_player_id if color == tab.BLUE else game.second_player_id


def game_join(*, user_id: int, group: int, size: int) -> Game:
    """Pair with the player waiting for the same (group, size), or wait for one; return the game."""
    now = timezone.now()
    with transaction.atomic():
        # Every join of a (group, size) locks the same row, so two simultaneous joins see each other.
        WaitingRoom.objects.select_for_update().get_or_create(group=group, size=size)
        waiting = (
            Game.objects.select_for_update()
            .filter(status=Game.Status.WAITING, group=group, size=size)
            .order_by("created_at")
            .first()
        )
        if waiting is not None and waiting.initial_player_id == user_id:
            return waiting
        if waiting is None:
            game = Game(group=group, size=size, initial_player_id=user_id, deadline=_deadline(now))
            _record(game, GameEvent.Kind.CREATE, user_id, {}, now)
            return game
        waiting.second_player_id = user_id
        waiting.status = Game.Status.PLAYING
        waiting.state = tab.State.new(size).to_json()
        waiting.started_at = now
        waiting.deadline = _deadline(now)
        _record(waiting, GameEvent.Kind.START, user_id, {}, now)
        return waiting


def game_leave(*, public_id: str, user_id: int) -> None:
    """Leave a game: a waiting game ends without a winner; a game in play is won by the opponent."""
    now = timezone.now()
    with transaction.atomic():
        game = _locked_game(public_id)
        color = _player_color(game, user_id)
        if game.status == Game.Status.FINISHED:
            raise GameError("The game is over")
        if game.status == Game.Status.WAITING:
            _finish(game, winner_id=None, ending=Game.Ending.CANCELLED, now=now)
        else:
            _forfeit(game, loser=color, ending=Game.Ending.LEAVE, now=now)
        _record(game, GameEvent.Kind.LEAVE, user_id, {}, now)


def game_roll(*, public_id: str, user_id: int) -> tab.Throw:
    """Throw the sticks for the player on turn."""
    now = timezone.now()
    with transaction.atomic():
        game, state = _playing_game(public_id, user_id)
        throw = tab.Throw.random()
        try:
            state.throw(throw)
        except tab.IllegalMove as error:
            raise GameError(str(error)) from None
        game.state = state.to_json()
        game.deadline = _deadline(now)
        data = {"sticks": list(throw.sticks), "value": throw.value}
        _record(game, GameEvent.Kind.THROW, user_id, data, now, state)
        return throw


def game_pass(*, public_id: str, user_id: int) -> None:
    """Pass the turn: allowed only when the throw gives no move and no re-throw."""
    now = timezone.now()
    with transaction.atomic():
        game, state = _playing_game(public_id, user_id)
        try:
            state.pass_turn()
        except tab.IllegalMove as error:
            raise GameError(str(error)) from None
        game.state = state.to_json()
        game.deadline = _deadline(now)
        _record(game, GameEvent.Kind.PASS, user_id, {}, now, state)


def game_notify(*, public_id: str, user_id: int, cell: int) -> None:
    """Select the piece on `cell`, or the destination at the fork; the move is made as soon as it is known."""
    now = timezone.now()
    with transaction.atomic():
        # The seed's own message for notify out of turn is in lower case.
        game, state = _playing_game(public_id, user_id, not_your_turn="not your turn to play")
        step_before = state.step
        try:
            move = state.select(cell)
        except tab.IllegalMove as error:
            raise GameError(str(error)) from None
        game.state = state.to_json()
        game.deadline = _deadline(now)
        if move is not None:
            kind = GameEvent.Kind.MOVE
            data = {"from": move.origin, "to": move.destination, "captures": move.captures}
            if state.winner is not None:
                _finish(game, winner_id=_user_of(game, state.winner), ending=Game.Ending.WIN, now=now)
        elif step_before == "to":
            kind, data = GameEvent.Kind.DESELECT, {"cell": cell}
        else:
            kind, data = GameEvent.Kind.SELECT, {"cell": cell, "destinations": state.selected}
        _record(game, kind, user_id, data, now, state)


def game_expire_due(*, now: datetime | None = None, limit: int = 200) -> int:
    """End the games whose deadline has passed; return how many. Safe to run in several processes at once."""
    now = now or timezone.now()
    expired = 0
    # A plain read first: most ticks find nothing due, and need not take a write lock to learn it.
    if not Game.objects.filter(deadline__lte=now).exists():
        return 0
    with transaction.atomic():
        # skip_locked: a game being played right now, or expired by another process, is left to them.
        due = list(
            Game.objects.select_for_update(skip_locked=True).filter(deadline__lte=now).order_by("deadline")[:limit]
        )
        for game in due:
            if game.status == Game.Status.FINISHED:
                continue
            if game.status == Game.Status.WAITING:
                _finish(game, winner_id=None, ending=Game.Ending.EXPIRED, now=now)
                _record(game, GameEvent.Kind.TIMEOUT, game.initial_player_id, {}, now)
            else:
                late = tab.State.from_json(game.state).turn
                _forfeit(game, loser=late, ending=Game.Ending.TIMEOUT, now=now)
                _record(game, GameEvent.Kind.TIMEOUT, _user_of(game, late), {}, now)
            expired += 1
    return expired


def game_end(*, public_id: str, opponent_wins: bool) -> Game:
    """End a stuck game (an administrator's decision): the player on turn loses, or, without `opponent_wins`,
    the game ends with no result and counts for no one. A game still waiting always ends with no result."""
    now = timezone.now()
    with transaction.atomic():
        game = _locked_game(public_id)
        if game.status == Game.Status.FINISHED:
            raise GameError("The game is over")
        loser = None
        if game.status == Game.Status.WAITING:
            _finish(game, winner_id=None, ending=Game.Ending.ENDED, now=now)
        else:
            loser = tab.State.from_json(game.state).turn if opponent_wins else None
            _forfeit(game, loser=loser, ending=Game.Ending.ENDED, now=now)
        # The log names the winner's colour, so that the result can be recomputed from it.
        _record(game, GameEvent.Kind.END, None, {"winner": loser and tab.opponent(loser)}, now)
        return game


def games_recompute() -> dict[str, int]:
    """Rebuild every result, ranking and rating from the games' logs; return what was read and corrected.

    The games in play and finished are locked for the while, so that no game ends half-counted meanwhile.
    """
    with transaction.atomic():
        list(Game.objects.select_for_update().exclude(status=Game.Status.WAITING).values_list("pk", flat=True))
        finished = (
            Game.objects.filter(status=Game.Status.FINISHED, second_player__isnull=False)
            .order_by("finished_at", "pk")
            .prefetch_related(Prefetch("events", queryset=GameEvent.objects.order_by("seq")))
        )
        results, corrected = [], 0
        for game in finished.iterator(chunk_size=500):
            entries = [{"seq": e.seq, "kind": e.kind, "player": e.player_id, "data": e.data} for e in game.events.all()]
            players = {game.initial_player_id: tab.BLUE, game.second_player_id: tab.RED}
            color = history.winner_color(game.size, entries, players)
            winner_id = None if color is None else _user_of(game, color)
            if winner_id != game.winner_id:
                game.winner_id = winner_id
                game.save(update_fields=["winner"])
                corrected += 1
            if winner_id is not None:
                results.append((game.group, game.size, game.initial_player_id, game.second_player_id, winner_id))
        rankings_rebuild(results)
    return {"games": len(results), "corrected": corrected}
