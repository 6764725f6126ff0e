"""Every write to a game: pairing, actions (through the game's engine), leaving and timeouts.

Each service is one transaction that takes the game row with select_for_update(), so that two requests on one
game are applied one at a time, and publishes the change only once the transaction has committed. The protocols'
views, the deadline sweeper, the computer players and admin actions all call these functions; nothing else writes a
game.
"""

import secrets
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Prefetch
from django.utils import timezone

from accounts.nicks import is_computer
from core.errors import Refusal
from rankings.services import ranking_record, rankings_rebuild

from . import history, publication, store
from .bots import runner
from .models import Game, GameEvent, WaitingRoom
from .rules import Engine, IllegalAction, Outcome, Played, find_engine

# The dice and sticks of every game: the operating system's randomness, which no player can predict.
RANDOM = secrets.SystemRandom()


class GameError(Refusal):
    """An action the game refuses; str() is the message for the client."""


def _engine(game: Game) -> Engine:
    return find_engine(game.kind)


def _deadline(now: datetime) -> datetime:
    return now + timedelta(seconds=settings.TAB_TURN_TIMEOUT)


def _locked_game(public_id: str) -> Game:
    # select_for_update(), built once (games/store.py); the players' nicks come from accounts.nicks, not a join.
    game = store.game_locked(public_id)
    if game is None:
        raise GameError("Invalid game reference")
    return game


def _seats(game: Game) -> list[int | None]:
    """Return the user id in each seat, seat 0 first."""
    return [game.initial_player_id, game.second_player_id]


def _seat_of(game: Game, user_id: int) -> int:
    try:
        return _seats(game).index(user_id)
    except ValueError:
        raise GameError("You are not a player of this game") from None


def _playing_game(
    public_id: str, user_id: int, *, not_your_turn: str = "Not your turn to play"
) -> tuple[Game, Engine, object, int]:
    """Lock the game, check that it is on and that this user is on turn; return it with its engine, rules state and
    the user's seat."""
    game = _locked_game(public_id)
    seat = _seat_of(game, user_id)
    if game.status == Game.Status.WAITING:
        raise GameError("The game has not started: waiting for an opponent")
    if game.status == Game.Status.FINISHED:
        raise GameError("The game is over")
    engine = _engine(game)
    state = engine.state_from_json(game.state)
    if engine.to_act(state) != seat:
        raise GameError(not_your_turn)
    return game, engine, state, seat


def _record(game: Game, kind: str, player_id: int | None, data: dict, now: datetime, state: object = None) -> None:
    """Advance the game's version, log the action under it, and publish the change after commit. `state` is the rules
    state that `game.state` was made from, if the caller has it (it need not be decoded again)."""
    game.version += 1
    if game.pk is None:
        game.save()
    else:
        store.game_save(game)
    store.event_add(game=game, kind=kind, player_id=player_id, data=data, at=now)
    publication.publish_on_commit(game, state, final=game.status == Game.Status.FINISHED)
    if game.status == Game.Status.PLAYING:
        runner.after_change(game.public_id, seat_on_turn(game, state)[1])


def seat_on_turn(game: Game, state: object = None) -> tuple[int | None, int | None]:
    """Return the seat on turn in a game in play, and the user in it; `state` is the game's, if already decoded."""
    engine = _engine(game)
    seat = engine.to_act(engine.state_from_json(game.state) if state is None else state)
    return seat, None if seat is None else _seats(game)[seat]


def _forfeit(game: Game, *, loser: int | None, ending: str, now: datetime, counted: bool = True) -> None:
    """End a game in play off the board: the opponent of the seat `loser` wins (no one, without a loser)."""
    winner_id = None if loser is None else _seats(game)[1 - loser]
    _finish(game, winner_id=winner_id, ending=ending, now=now, counted=counted)


def _started_only(game: Game) -> bool:
    """Return whether nobody has acted in the game since it started (its version counts its log's entries, and
    created and started are the first two)."""
    return game.version <= 2


def _ending(outcome: Outcome) -> str:
    """Return how a game that ended on the board is recorded: the engine's reason, if the platform knows it."""
    if outcome.reason in Game.Ending.values:
        return outcome.reason
    return Game.Ending.DRAW if outcome.is_draw else Game.Ending.WIN


def _finish(game: Game, *, winner_id: int | None, ending: str, now: datetime, counted: bool = True) -> None:
    was_playing = game.status == Game.Status.PLAYING
    game.status = Game.Status.FINISHED
    game.winner_id = winner_id
    game.ending = ending
    game.finished_at = now
    game.deadline = None
    # A game in play ends without a winner only when an administrator annuls it: then it counts for no one. Nor
    # does a game against the computer (it is practice), nor one left before anybody acted (`counted`: else two
    # accounts could mint victories by join, join, leave).
    computer = any(is_computer(user_id) for user_id in _seats(game))
    if was_playing and counted and winner_id is not None and not computer:
        ranking_record(
            group=game.group,
            size=game.size,
            player_ids=[game.initial_player_id, game.second_player_id],
            winner_id=winner_id,
        )


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
        engine = _engine(waiting)
        waiting.state = engine.state_to_json(engine.new(2, {"size": size}, RANDOM))
        waiting.started_at = now
        waiting.deadline = _deadline(now)
        _record(waiting, GameEvent.Kind.START, user_id, {}, now)
        return waiting


def game_challenge_computer(*, user_id: int, level: int, size: int) -> Game:
    """Start a game of Tâb at once against the computer player of `level`, the user first to play. It counts for no
    ranking (group 0 is no course group)."""
    now = timezone.now()
    computer = runner.computer_user(level)
    with transaction.atomic():
        game = Game(group=0, size=size, initial_player_id=user_id)
        _record(game, GameEvent.Kind.CREATE, user_id, {}, now)
        game.second_player_id = computer.pk
        game.status = Game.Status.PLAYING
        engine = _engine(game)
        game.state = engine.state_to_json(engine.new(2, {"size": size}, RANDOM))
        game.started_at = now
        game.deadline = _deadline(now)
        _record(game, GameEvent.Kind.START, computer.pk, {}, now)
        return game


def game_leave(*, public_id: str, user_id: int) -> None:
    """Leave a game: a waiting game ends without a winner; a game in play is won by the opponent."""
    now = timezone.now()
    with transaction.atomic():
        game = _locked_game(public_id)
        seat = _seat_of(game, user_id)
        if game.status == Game.Status.FINISHED:
            raise GameError("The game is over")
        if game.status == Game.Status.WAITING:
            _finish(game, winner_id=None, ending=Game.Ending.CANCELLED, now=now)
        else:
            # The opponent wins, as the protocol says, but a game nobody played counts for no ranking.
            _forfeit(game, loser=seat, ending=Game.Ending.LEAVE, now=now, counted=not _started_only(game))
        _record(game, GameEvent.Kind.LEAVE, user_id, {}, now)


def game_act(*, public_id: str, user_id: int, action: object, not_your_turn: str = "Not your turn to play") -> Played:
    """Make a player's action in a game in play (a throw, a move, …, in its engine's terms); return what it did."""
    now = timezone.now()
    with transaction.atomic():
        game, engine, state, seat = _playing_game(public_id, user_id, not_your_turn=not_your_turn)
        try:
            played = engine.apply(state, seat, action, RANDOM)
        except IllegalAction as error:
            raise GameError(str(error)) from None
        game.state = engine.state_to_json(state)
        game.deadline = _deadline(now)
        outcome = engine.outcome(state)
        if outcome is not None:
            winner = outcome.winner
            _finish(game, winner_id=None if winner is None else _seats(game)[winner], ending=_ending(outcome), now=now)
        _record(game, played.kind, user_id, dict(played.data), now, state)
        return played


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
                late = seat_on_turn(game)[0]
                _forfeit(game, loser=late, ending=Game.Ending.TIMEOUT, now=now)
                _record(game, GameEvent.Kind.TIMEOUT, None if late is None else _seats(game)[late], {}, now)
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
            loser = seat_on_turn(game)[0] if opponent_wins else None
            _forfeit(game, loser=loser, ending=Game.Ending.ENDED, now=now)
        # The log names the winner's seat, so that the result can be recomputed from it.
        _record(game, GameEvent.Kind.END, None, {"winner": None if loser is None else 1 - loser}, now)
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
            seat = history.winner_seat(game.kind, {"size": game.size}, _seats(game), entries)
            winner_id = None if seat is None else _seats(game)[seat]
            if winner_id != game.winner_id:
                game.winner_id = winner_id
                game.save(update_fields=["winner"])
                corrected += 1
            played = any(entry["kind"] not in history.PLATFORM_KINDS for entry in entries)
            if winner_id is not None and (played or entries[-1]["kind"] != GameEvent.Kind.LEAVE):
                results.append((game.group, game.size, game.initial_player_id, game.second_player_id, winner_id))
        rankings_rebuild(results)
    return {"games": len(results), "corrected": corrected}
