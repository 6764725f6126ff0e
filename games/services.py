"""Every write to a match, whatever its game: pairing into seats, actions (through the game's engine), leaving,
timeouts and the end with each seat's rank.

Each service is one transaction that takes the game row with select_for_update(), so that two requests on one
game are applied one at a time, and publishes the change only once the transaction has committed. The protocols'
views, the deadline sweeper, the computer players and admin actions all call these functions; nothing else writes a
game.
"""

import contextlib
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import Exists, F, OuterRef, Prefetch
from django.utils import timezone

from accounts.nicks import is_computer
from core.errors import Refusal
from core.randomness import SecureRandom
from rankings.services import Changes, Result, rankings_rebuild, result_record

from . import history, publication, store
from .bots import runner
from .models import Game, GameEvent, Seat, SweepMark, WaitingRoom
from .rules import Engine, IllegalAction, Outcome, Played, find_engine

# The dice and sticks of every game: the operating system's randomness, which no player can predict (read ahead: an
# action must not give up the GIL for it, core/randomness.py).
RANDOM = SecureRandom()


class GameError(Refusal):
    """An action the game refuses; str() is the message for the client, and `rule` the rules' own refusal (the
    engine's IllegalAction, of the game's own kind) when it was the rules that refused."""

    def __init__(self, message: str, *, rule: IllegalAction | None = None):
        super().__init__(message)
        self.rule = rule


class NotYourTurn(GameError):
    """An action of a player who is not on turn, in a game in play."""


def _engine(game: Game) -> Engine:
    return find_engine(game.kind)


def _deadline(game: Game, now: datetime) -> datetime:
    """Return when the turn that begins now ends: the match's own turn time, or TAB_TURN_TIMEOUT."""
    return now + timedelta(seconds=game.turn_seconds or settings.TAB_TURN_TIMEOUT)


def remaining_ms(deadline: datetime, now: datetime) -> int:
    """Return the milliseconds from `now` to `deadline`, a fraction counting as a whole one, and never below 0: a
    reading is 0 exactly when the clock has run out."""
    return max(0, math.ceil((deadline - now) / timedelta(milliseconds=1)))


def _clock_stop(game: Game, seat: int | None, now: datetime) -> None:
    """Stop the running clock, the one of `seat` (an action, or the end of the game): note its reading."""
    if game.clock_ms is None or game.deadline is None or seat is None:
        return
    clocks = list(game.clocks or [game.clock_ms] * game.seat_count)
    clocks[seat] = remaining_ms(game.deadline, now)
    game.clocks = clocks
    game.deadline = None


def _clock_start(game: Game, state: object, now: datetime) -> None:
    """Start the clock of the seat on turn in `state`: the game's deadline is when it runs out."""
    seat = seat_on_turn(game, state)[0]
    if seat is not None:
        clocks = game.clocks or [game.clock_ms] * game.seat_count
        game.deadline = now + timedelta(milliseconds=clocks[seat])


def _ran_out(game: Game, now: datetime) -> bool:
    """End a game with clocks whose running clock has run out by `now` (before the sweeper comes to it); return
    whether it did. Whatever arrives after that instant finds the game over."""
    if game.clock_ms is None or game.status != Game.Status.PLAYING or game.deadline is None or game.deadline > now:
        return False
    _time_out(game, now)
    return True


def _time_out(game: Game, now: datetime) -> None:
    """End a game in play whose deadline has passed: the seat on turn loses (its clock, if it has one, at 0). If
    nobody had acted, the players abandoned it: it counts for no one. In a game that goes on without a seat (Fish),
    the seat on turn is removed instead, and the next one's turn begins."""
    late = seat_on_turn(game)[0]
    if late is not None and game.clock_ms is None:
        engine = _engine(game)
        if _remove(game, engine, engine.state_from_json(game.state), late, "timeout", now):
            return
    if game.acted_at is None:
        ending = Game.Ending.ABANDONED
    else:
        ending = Game.Ending.TIMEOUT if game.clock_ms is None else Game.Ending.FLAG
    _forfeit(game, loser=late, ending=ending, now=now, counted=game.acted_at is not None)
    _record(game, GameEvent.Kind.TIMEOUT, None if late is None else _seats(game)[late], {}, now)


TIME_UP = "The game is over: a clock ran out"


def _locked_game(public_id: str, kind: str | None = None) -> Game:
    """Lock the game; with `kind`, a game of another kind is no game here (a protocol of one game names only its own:
    the Tâb API must not end a Fish tournament)."""
    # select_for_update(), built once (games/store.py); the players' nicks come from accounts.nicks, not a join.
    game = store.game_locked(public_id)
    if game is None or (kind is not None and game.kind != kind):
        raise GameError("Invalid game reference")
    return game


def _seats(game: Game) -> list[int]:
    """Return the user id in each seat, seat 0 first."""
    return game.seat_user_ids


def _seat_of(game: Game, user_id: int) -> int:
    try:
        return _seats(game).index(user_id)
    except ValueError:
        raise GameError("You are not a player of this game") from None


def _playing_game(
    public_id: str,
    user_id: int,
    *,
    not_your_turn: str = "Not your turn to play",
    now: datetime,
    kind: str | None = None,
) -> tuple[Game | None, Engine, object, int]:
    """Lock the game, check that it is on and that this user is on turn; return it with its engine, rules state and
    the user's seat. No game if its clock on turn ran out by `now`: that end is written, and the action refused."""
    game = _locked_game(public_id, kind)
    seat = _seat_of(game, user_id)
    if _ran_out(game, now):
        return None, _engine(game), None, seat
    if game.status == Game.Status.WAITING:
        raise GameError("The game has not started: waiting for an opponent")
    if game.status == Game.Status.FINISHED:
        raise GameError("The game is over")
    engine = _engine(game)
    state = store.kept_state(game)
    if state is None:
        state = engine.state_from_json(game.state)
    if engine.to_act(state) != seat:
        raise NotYourTurn(not_your_turn)
    return game, engine, state, seat


def _record(
    game: Game, kind: str, player_id: int | None, data: dict, now: datetime, state: object = None, *, save: bool = True
) -> None:
    """Advance the game's version, log the action under it, and publish the change after commit. `state` is the rules
    state that `game.state` was made from, if the caller has it (it need not be decoded again). The log's entry is
    written with the game's save (`_save`); without `save`, the caller saves the game itself, before its transaction
    ends (once for several records: `_automatic`)."""
    game.version += 1
    game.changed_at = now
    store.event_pending(game=game, kind=kind, player_id=player_id, data=data, at=now)
    if save:
        _save(game, state)
    publication.publish_on_commit(game, state, final=game.status == Game.Status.FINISHED)
    if game.status == Game.Status.PLAYING:
        runner.after_change(game.public_id, seat_on_turn(game, state)[1])


def _save(game: Game, state: object = None) -> None:
    """Save the game, and the entries of its log that `_record` left to be written with it."""
    if game.pk is None:
        game.save()
        store.events_write(game)
    else:
        store.game_save(game, state)


def seat_on_turn(game: Game, state: object = None) -> tuple[int | None, int | None]:
    """Return the seat on turn in a game in play, and the user in it; `state` is the game's, if already decoded."""
    engine = _engine(game)
    seat = engine.to_act(engine.state_from_json(game.state) if state is None else state)
    return seat, None if seat is None else _seats(game)[seat]


def _forfeit(game: Game, *, loser: int | None, ending: str, now: datetime, counted: bool = True) -> None:
    """End a game in play off the board: the seat `loser` ranks last and the others share first place (in a game
    for two, the opponent wins); without a loser, the game ends with no result."""
    ranks = None if loser is None else history.forfeit_ranks(len(_seats(game)), loser)
    _finish(game, ranks=ranks, ending=ending, now=now, counted=counted)


def _ending(outcome: Outcome) -> str:
    """Return how a game that ended on the board is recorded: the engine's reason, if the platform knows it."""
    if outcome.reason in Game.Ending.values:
        return outcome.reason
    return Game.Ending.DRAW if outcome.is_draw else Game.Ending.WIN


def _winner(seats: list[int], ranks: tuple[int, ...] | None) -> int | None:
    """Return the user alone in first place, or None."""
    if ranks is None or ranks.count(1) != 1:
        return None
    return seats[ranks.index(1)]


def _finish(
    game: Game,
    *,
    ranks: tuple[int, ...] | None,
    ending: str,
    now: datetime,
    counted: bool = True,
    state: object = None,
    points: tuple[int, ...] | None = None,
) -> None:
    """End the game with each seat's rank (None: no result) and, in a game that scores, each seat's points;
    `state` is the position it ended in, if decoded."""
    was_playing = game.status == Game.Status.PLAYING
    if was_playing and game.clock_ms is not None:
        _clock_stop(game, seat_on_turn(game, state)[0], now)
    seats = _seats(game)
    game.status = Game.Status.FINISHED
    game.winner_id = _winner(seats, ranks)
    game.ending = ending
    game.finished_at = now
    game.deadline = None
    if was_playing and (ranks is not None or game.clocks):
        # Each seat's rank, and its clock's last reading.
        written = {}
        if ranks is not None:
            written["rank"] = ranks
        if game.clocks:
            written["clock_ms"] = game.clocks
        store.seats_write(game, **written)
    # A game in play ends without a result only when an administrator annuls it: then it counts for no one. Nor
    # does a game against the computer (it is practice), nor one in no pool (anonymous players' rooms), nor one left
    # or timed out before anybody acted (`counted`: else two accounts could mint victories by join, join, leave).
    computer = any(is_computer(user_id) for user_id in seats)
    if was_playing and counted and ranks is not None and not computer and game.pool:
        _ratings_note(game, seats, result_record(_result(game, seats, ranks, points)))


def _ratings_note(game: Game, seats: list[int], changes: Changes) -> None:
    """Write each seat's rating before and after the match."""
    store.seats_write(
        game,
        rating_before=[changes[user_id][0] for user_id in seats],
        rating_after=[changes[user_id][1] for user_id in seats],
    )


def _remove(game: Game, engine: Engine, state: object, seat: int, why: str, now: datetime) -> bool:
    """Take `seat` out of a game in play that goes on without it (`Engine.remove`), for `why` ("rule": it broke one;
    "timeout"); return False, changing nothing, in a game that cannot. When the seat was on turn, the next one's turn
    begins; the game ends when the rules say, or with no result once every seat is out."""
    on_turn = engine.to_act(state) == seat
    try:
        played = engine.remove(state, seat)
    except IllegalAction as error:  # removed already
        raise GameError(str(error), rule=error) from None
    if played is None:
        return False
    game.state = engine.state_to_json(state)
    outcome = engine.outcome(state)
    if outcome is not None:
        _finish_on_board(game, outcome, now, state)
    elif engine.to_act(state) is None:
        _finish(game, ranks=None, ending=Game.Ending.KICK, now=now, state=state)
    elif on_turn:
        game.deadline = _deadline(game, now)
    _record(game, GameEvent.Kind.REMOVE, _seats(game)[seat], {**played.data, "why": why}, now, state)
    return True


def _finish_on_board(game: Game, outcome: Outcome, now: datetime, state: object) -> None:
    """End the game as its engine's outcome says (ranks, points, reason); `state` is the position it ended in."""
    _finish(game, ranks=outcome.ranks, ending=_ending(outcome), now=now, state=state, points=outcome.points)


def _result(game: Game, seats: list[int], ranks: tuple[int, ...], points: tuple[int, ...] | None) -> Result:
    return Result(
        kind=game.kind,
        variant=game.variant,
        pool=game.pool,
        ranks=dict(zip(seats, ranks, strict=True)),
        points=None if points is None else dict(zip(seats, points, strict=True)),
        multiplayer=_engine(game).max_seats > 2,
        match=game.pk,
    )


def _take_seat(game: Game, user_id: int) -> None:
    Seat.objects.create(game=game, index=len(_seats(game)), user_id=user_id)
    game._seat_user_ids = [*_seats(game), user_id]


def _start(game: Game, user_id: int, now: datetime) -> None:
    """Start a match whose seats are all taken (the last by `user_id`)."""
    engine = _engine(game)
    game.status = Game.Status.PLAYING
    state = engine.new(game.seat_count, game.options, RANDOM)
    game.state = engine.state_to_json(state)
    game.started_at = now
    if game.clock_ms is None:
        game.deadline = _deadline(game, now)
    else:
        game.clocks = [game.clock_ms] * game.seat_count
        _clock_start(game, None, now)
    _record(game, GameEvent.Kind.START, user_id, {}, now, save=False)
    _automatic(game, engine, state, now, unsaved=True)
    store.seated_remember(game)


def _new_match(kind: str, options: dict, pool: str, seat_count: int | None = None) -> Game:
    """Return an unsaved match of `kind` with its options checked and completed by the engine (ValueError if bad)."""
    engine = find_engine(kind)
    options = engine.options(options)
    seat_count = engine.min_seats if seat_count is None else seat_count
    if not engine.min_seats <= seat_count <= engine.max_seats:
        raise ValueError(f"{engine.title} is played by {engine.min_seats} to {engine.max_seats}")
    match = Game(kind=kind, options=options, variant=engine.variant(options), pool=pool, seat_count=seat_count)
    match._seat_user_ids = []
    return match


def _withdraw(game: Game, user_id: int, now: datetime) -> None:
    """Take the user out of a match that waits for players: it ends if nobody else waits in it, else the seats after
    theirs move up one."""
    seats = _seats(game)
    if len(seats) == 1:
        _finish(game, ranks=None, ending=Game.Ending.CANCELLED, now=now)
    else:
        index = seats.index(user_id)
        Seat.objects.filter(game=game, index=index).delete()
        for later in range(index + 1, len(seats)):
            Seat.objects.filter(game=game, index=later).update(index=later - 1)
        game._seat_user_ids = [seat for seat in seats if seat != user_id]
    _record(game, GameEvent.Kind.LEAVE, user_id, {}, now)


def match_join(*, user_id: int, kind: str, options: dict, pool: str, seat_count: int | None = None) -> Game:
    """Take a seat in the oldest match waiting for players of the same game, variant and pool (the variant names
    every option that makes another game: `Engine.variant`), or open one and wait; the match starts when its last
    seat is taken. Return the match.

    An account waits in one match at a time: joining elsewhere withdraws it from the match it waited in."""
    now = timezone.now()
    match = _new_match(kind, options, pool, seat_count)
    room = (kind, match.variant, pool, match.seat_count)
    with transaction.atomic():
        withdraw_elsewhere(user_id, now, room)
        # Every join of a (game, variant, pool) locks the same row, so two simultaneous joins see each other.
        WaitingRoom.objects.select_for_update().get_or_create(kind=kind, variant=match.variant, pool=pool)
        waiting = (
            Game.objects.select_for_update()
            .filter(
                status=Game.Status.WAITING, kind=kind, variant=match.variant, pool=pool, seat_count=match.seat_count
            )
            .order_by("created_at")
            .first()
        )
        if waiting is not None and user_id in _seats(waiting):
            return waiting
        if waiting is None:
            match.deadline = _deadline(match, now)
            _record(match, GameEvent.Kind.CREATE, user_id, {}, now)
            _take_seat(match, user_id)
            return match
        _take_seat(waiting, user_id)
        if len(_seats(waiting)) == waiting.seat_count:
            _start(waiting, user_id, now)
        return waiting


def account_lock(user_id: int) -> None:
    """Lock the user's account row until the transaction ends: two changes of one player that must not interleave
    (in two threads or server processes) take turns."""
    list(get_user_model().objects.select_for_update().filter(pk=user_id).values_list("pk", flat=True))


def withdraw_elsewhere(user_id: int, now: datetime, room: tuple | None = None) -> None:
    """Withdraw the user from the match they wait in, unless it is one of `room` (game, variant, pool, seats)."""
    # Two joins of one account take turns, so that the second sees where the first made it wait, and withdraws it
    # from there.
    account_lock(user_id)
    # Mostly none: one light query to learn it.
    waiting_seats = Seat.objects.filter(user_id=user_id, game__status=Game.Status.WAITING)
    waited_in = list(waiting_seats.values_list("game", flat=True))
    if waited_in:
        for elsewhere in Game.objects.select_for_update().filter(pk__in=waited_in, status=Game.Status.WAITING):
            if (elsewhere.kind, elsewhere.variant, elsewhere.pool, elsewhere.seat_count) != room:
                _withdraw(elsewhere, user_id, now)


def match_against_computer(*, user_id: int, kind: str, options: dict, level: int) -> Game:
    """Start a match for two at once between the user (seat 0, first to play) and the computer player of `level`,
    withdrawing the user from a match they waited in. It is practice: it belongs to no pool and counts for no ranking
    or rating."""
    now = timezone.now()
    computer = runner.computer_user(level)
    match = _new_match(kind, options, "", seat_count=2)
    with transaction.atomic():
        withdraw_elsewhere(user_id, now)
        _record(match, GameEvent.Kind.CREATE, user_id, {}, now)
        _take_seat(match, user_id)
        _take_seat(match, computer.pk)
        _start(match, computer.pk, now)
        return match


def match_open(
    *,
    kind: str,
    options: dict,
    user_ids: list[int],
    pool: str = "",
    clock_ms: int | None = None,
    turn_seconds: float | None = None,
    seat_count: int | None = None,
) -> Game:
    """Open a match whose players come by invitation, at their own pace: the users given take its first seats, seat 0
    first, and it waits without a deadline meanwhile. With every seat taken (`seat_count`: as many as users), it
    starts when `match_start` says; else `match_seat` seats the others, and the last one starts it."""
    now = timezone.now()
    if seat_count is not None and not 0 < len(user_ids) <= seat_count:
        raise ValueError(f"a match for {seat_count} opens with 1 to {seat_count} of its players")
    match = _new_match(kind, options, pool, seat_count or len(user_ids))
    match.clock_ms, match.turn_seconds = clock_ms, turn_seconds
    with transaction.atomic():
        _record(match, GameEvent.Kind.CREATE, user_ids[0], {}, now)
        for user_id in user_ids:
            _take_seat(match, user_id)
        return match


def match_start(*, public_id: str, user_id: int) -> Game:
    """Start a match opened by `match_open` (`user_id` is the player whose coming starts it)."""
    now = timezone.now()
    with transaction.atomic():
        game = _locked_game(public_id)
        if game.status != Game.Status.WAITING:
            raise GameError("The game has started already")
        _start(game, user_id, now)
        return game


def match_seat(*, public_id: str, user_id: int) -> Game:
    """Seat the user in the next free seat of a match opened by `match_open`; the last seat taken starts it."""
    now = timezone.now()
    with transaction.atomic():
        game = _locked_game(public_id)
        if game.status != Game.Status.WAITING or len(_seats(game)) >= game.seat_count:
            raise GameError("The game has started already")
        if user_id in _seats(game):
            raise GameError("You have a seat in this game already")
        _take_seat(game, user_id)
        if len(_seats(game)) == game.seat_count:
            _start(game, user_id, now)
        return game


def rooms_clean() -> int:
    """Delete the waiting rooms where nobody waits; return how many. A room is only the row that joins lock: the next
    join makes it again (and a join that holds it meanwhile keeps it until it commits)."""
    waiting = Game.objects.filter(
        status=Game.Status.WAITING, kind=OuterRef("kind"), variant=OuterRef("variant"), pool=OuterRef("pool")
    )
    deleted, _ = WaitingRoom.objects.filter(~Exists(waiting)).delete()
    return deleted


def game_leave(*, public_id: str, user_id: int, kind: str | None = None) -> None:
    """Leave a game (of `kind`, if given): a player waiting alone ends it without a winner; a game in play is won by
    the opponent."""
    now = timezone.now()
    with transaction.atomic():
        game = _locked_game(public_id, kind)
        seat = _seat_of(game, user_id)
        if game.status == Game.Status.FINISHED:
            raise GameError("The game is over")
        if game.status == Game.Status.WAITING:
            # Alone, the game ends; with others waiting, they wait on without the player.
            _withdraw(game, user_id, now)
            return
        # The opponent wins, as the protocol says, but a game nobody played counts for no ranking.
        _forfeit(game, loser=seat, ending=Game.Ending.LEAVE, now=now, counted=game.acted_at is not None)
        _record(game, GameEvent.Kind.LEAVE, user_id, {}, now)


@dataclass(frozen=True, slots=True)
class Acted:
    """What an action did (its log entry) and the position it left, as stored (the engine's JSON) and as the rules'
    state: that one the caller may read until its transaction commits, never change nor keep (it is then the game's
    next action's); and the game's row as the action wrote it."""

    played: Played
    position: dict
    state: object
    game: Game


def game_act(
    *,
    public_id: str,
    user_id: int,
    action: object,
    not_your_turn: str = "Not your turn to play",
    check: Callable[[object], None] | None = None,
    kind: str | None = None,
) -> Acted:
    """Make a player's action in a game in play (a throw, a move, …, in its engine's terms; of `kind`, if given);
    return what it did and the position it left. In a game with clocks, the mover's clock stops and the next one's
    starts. `check`, if given, sees the position first (the player being on turn): what it raises refuses the action,
    as a protocol's own checks do, in their order, before the rules'."""
    now = timezone.now()
    with checked_then_written():
        game, engine, state, seat = _playing_game(public_id, user_id, not_your_turn=not_your_turn, now=now, kind=kind)
        if game is not None:
            if check is not None:
                check(state)
            try:
                played = engine.apply(state, seat, action, RANDOM)
            except IllegalAction as error:
                raise GameError(str(error), rule=error) from None
            if game.clock_ms is None:
                game.deadline = _deadline(game, now)
            else:
                _clock_stop(game, seat, now)
            if game.acted_at is None:
                game.acted_at = now
            game.state = engine.state_to_json(state)
            outcome = engine.outcome(state)
            if outcome is not None:
                _finish_on_board(game, outcome, now, state)
            elif game.clock_ms is not None:
                _clock_start(game, state, now)
            _record(game, played.kind, user_id, dict(played.data), now, state, save=False)
            _automatic(game, engine, state, now, unsaved=True)
            return Acted(played, game.state, state, game)
    # The clock on turn ran out before the action came: the game ended (committed above), and the action is refused.
    raise GameError(TIME_UP)


@contextlib.contextmanager
def checked_then_written() -> Iterator[None]:
    """The transaction of a service that refuses (raises a Refusal) only where what it wrote so far stands on its own:
    before its first write, or after a whole change (a game its clock ended just before the action came). Without a
    savepoint of its own: two statements fewer in a batch of the database thread (an action is the busiest write). A
    refusal leaves the block normally, keeping what stands, and is raised once it is closed; anything else raised
    undoes the whole transaction (core/dbthread.py then runs the batch's calls again one by one)."""
    refusal: Refusal | None = None
    with transaction.atomic(savepoint=False):
        try:
            yield
        except Refusal as error:
            refusal = error
    if refusal is not None:
        raise refusal


def _automatic(game: Game, engine: Engine, state: object, now: datetime, *, unsaved: bool = False) -> None:
    """Make the actions the server makes by itself (the engine's `automatic`: a roll of the dice that begins a turn),
    each logged as its seat's, as long as one is due. The game is saved once, after them, if any was made or the
    caller's own record left it `unsaved` (a move that ends a turn and the roll that begins the next: one write)."""
    while game.status == Game.Status.PLAYING and (action := engine.automatic(state)) is not None:
        seat = engine.to_act(state)
        played = engine.apply(state, seat, action, RANDOM)
        game.state = engine.state_to_json(state)
        outcome = engine.outcome(state)
        if outcome is not None:
            _finish_on_board(game, outcome, now, state)
        _record(game, played.kind, _seats(game)[seat], dict(played.data), now, state, save=False)
        unsaved = True
    if unsaved:
        _save(game, state)


def _draw_offers(public_id: str, user_id: int, now: datetime) -> tuple[Game | None, int, list[int]]:
    """Lock a game in play for an offer of a draw: return it, the user's seat and the seats whose offer stands; no
    game if its clock on turn has just run out (that end is written)."""
    game = _locked_game(public_id)
    seat = _seat_of(game, user_id)
    if _ran_out(game, now):
        return None, seat, []
    if game.status != Game.Status.PLAYING:
        raise GameError("The game is not in play")
    return game, seat, list(game.draw_offers or [])


def game_draw_offer(*, public_id: str, user_id: int) -> bool:
    """Offer a draw, on one's turn or not; the offer stands until withdrawn. When every seat's offer stands, the game
    ends drawn by agreement. Return whether it did."""
    now = timezone.now()
    with transaction.atomic():
        game, seat, offers = _draw_offers(public_id, user_id, now)
        if game is not None:
            if seat in offers:
                raise GameError("You have offered a draw already")
            game.draw_offers = sorted([*offers, seat])
            agreed = len(game.draw_offers) == game.seat_count
            if agreed:
                _finish(game, ranks=(1,) * game.seat_count, ending=Game.Ending.AGREED, now=now)
            _record(game, GameEvent.Kind.DRAW_OFFER, user_id, {}, now)
            return agreed
    raise GameError(TIME_UP)


def game_draw_cancel(*, public_id: str, user_id: int) -> None:
    """Withdraw one's standing offer of a draw."""
    now = timezone.now()
    with transaction.atomic():
        game, seat, offers = _draw_offers(public_id, user_id, now)
        if game is not None:
            if seat not in offers:
                raise GameError("You have no offer of a draw to withdraw")
            game.draw_offers = [offered for offered in offers if offered != seat]
            _record(game, GameEvent.Kind.DRAW_CANCEL, user_id, {}, now)
            return
    raise GameError(TIME_UP)


def game_remove(*, public_id: str, user_id: int, why: str = "rule") -> None:
    """Take the user's seat out of a game in play that goes on without it (Fish removes a player who breaks a rule);
    refused in a game that cannot go on without a seat."""
    now = timezone.now()
    with transaction.atomic():
        game = _locked_game(public_id)
        seat = _seat_of(game, user_id)
        if game.status != Game.Status.PLAYING:
            raise GameError("The game is not in play")
        engine = _engine(game)
        if not _remove(game, engine, engine.state_from_json(game.state), seat, why, now):
            raise GameError(f"A player of {engine.title} cannot be removed from a game that goes on")


def game_overdue(*, public_id: str) -> bool:
    """Time the game out now if its deadline has passed and the sweeper has not come to it yet (what a protocol that
    refuses late actions asks before one); return whether it did."""
    now = timezone.now()
    with transaction.atomic():
        game = _locked_game(public_id)
        if game.status != Game.Status.PLAYING or game.deadline is None or game.deadline > now:
            return False
        _time_out(game, now)
        return True


def game_expire(*, public_id: str) -> bool:
    """End the game now if its clock on turn has run out (what the sweeper does, for one game, before a reading of its
    clocks is shown); return whether it did."""
    now = timezone.now()
    with transaction.atomic():
        game = _locked_game(public_id)
        return _ran_out(game, now)


# The games whose deadlines an outage of ours does not push back: their protocol says that a deadline that passed
# while the server was down fires as soon as it is back (Fish). A protocol's AppConfig.ready adds its game's kind.
DEADLINES_KEPT_THROUGH_OUTAGES: set[str] = set()

# How often the sweepers note that they run: a write a second at most, whatever the number of processes.
SWEEP_MARKED_EVERY = timedelta(seconds=1)
# A gap between two marks longer than this is an outage for the games with clocks (the marks come every second).
CLOCK_OUTAGE = timedelta(seconds=2)


def outage_bridge(*, now: datetime | None = None) -> timedelta | None:
    """Note that a sweeper runs now; if none ran for longer than TAB_OUTAGE_GRACE (every server down, or the
    database unreachable), push back the deadlines that were still ahead when one last ran by the whole gap, and
    return the gap. A turn's clock stands still while we cannot serve; deadlines that were already due then stay due.
    The players' clocks of games timed for the whole game (draughts) stand still through any gap longer than
    CLOCK_OUTAGE: a restart costs them at most the second before it."""
    now = now or timezone.now()
    mark = SweepMark.objects.filter(pk=1).values_list("swept_at", flat=True).first()
    # A plain read first: within a second of the last mark, there is nothing to write.
    if mark is not None and mark <= now < mark + SWEEP_MARKED_EVERY:
        return None
    with transaction.atomic():
        mark_row, created = SweepMark.objects.select_for_update().get_or_create(pk=1, defaults={"swept_at": now})
        if created or now <= mark_row.swept_at:
            return None
        gap = now - mark_row.swept_at
        # Never less than the gaps that sweeping leaves between marks: with a grace that short, every mark would look
        # like the end of an outage, and the clocks would never run.
        grace = max(settings.TAB_OUTAGE_GRACE, 2 * (SWEEP_MARKED_EVERY.total_seconds() + settings.TAB_SWEEP_INTERVAL))
        bridged = gap > timedelta(seconds=grace)
        ahead = Game.objects.filter(deadline__gte=mark_row.swept_at).exclude(kind__in=DEADLINES_KEPT_THROUGH_OUTAGES)
        if bridged:
            ahead.update(deadline=F("deadline") + gap)
        elif gap > CLOCK_OUTAGE:
            # A player's clock for the whole game loses no more than the last second to an outage, however short.
            bridged = ahead.filter(clock_ms__isnull=False).update(deadline=F("deadline") + gap) > 0
        mark_row.swept_at = now
        mark_row.save(update_fields=["swept_at"])
        if bridged:
            # Deadlines moved, no change of any match published: what is kept of matches in memory is dropped.
            publication.every_channel_changed_on_commit()
        return gap if bridged else None


def game_expire_due(*, now: datetime | None = None, limit: int = 25) -> int:
    """End the games whose deadline has passed, `limit` at most (one transaction: with SQLite it holds the write lock
    of every writer, the event loop's database calls among them, for about a millisecond and a half a game); return
    how many. Safe to run in several processes at once."""
    now = now or timezone.now()
    expired = 0
    # A plain read first: most ticks find nothing due, and need not take a write lock to learn it.
    if not Game.objects.filter(deadline__lte=now).exists():
        return 0
    with transaction.atomic():
        # skip_locked: a game being played right now, or expired by another process, is left to them.
        due = list(
            Game.objects.select_for_update(skip_locked=True)
            .filter(deadline__lte=now)
            .order_by("deadline")
            .prefetch_related("seats")[:limit]
        )
        for game in due:
            if game.status == Game.Status.FINISHED:
                continue
            if game.status == Game.Status.WAITING:
                _finish(game, ranks=None, ending=Game.Ending.EXPIRED, now=now)
                _record(game, GameEvent.Kind.TIMEOUT, _seats(game)[0], {}, now)
            else:
                _time_out(game, now)
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
            _finish(game, ranks=None, ending=Game.Ending.ENDED, now=now)
        else:
            loser = seat_on_turn(game)[0] if opponent_wins else None
            _forfeit(game, loser=loser, ending=Game.Ending.ENDED, now=now)
        # The log names the loser's seat (and in a game for two the winner's), so that the result can be recomputed.
        _record(game, GameEvent.Kind.END, None, history.end_data(len(_seats(game)), loser), now)
        return game


def games_recompute() -> dict[str, int]:
    """Rebuild every result, ranking and rating from the games' logs; return what was read and corrected.

    The games in play and finished are locked for the while, so that no game ends half-counted meanwhile.
    """
    with transaction.atomic():
        list(Game.objects.select_for_update().exclude(status=Game.Status.WAITING).values_list("pk", flat=True))
        finished = (
            Game.objects.filter(status=Game.Status.FINISHED, started_at__isnull=False)
            .order_by("finished_at", "pk")
            .prefetch_related("seats", Prefetch("events", queryset=GameEvent.objects.order_by("seq")))
        )
        results, corrected = [], 0
        for game in finished.iterator(chunk_size=500):
            entries = [{"seq": e.seq, "kind": e.kind, "player": e.player_id, "data": e.data} for e in game.events.all()]
            seats = _seats(game)
            outcome = history.final_outcome(game.kind, game.options, seats, entries)
            ranks = None if outcome is None else outcome.ranks
            stored = sorted(game.seats.all(), key=lambda seat: seat.index)
            proven = ranks or (None,) * len(seats)
            changed = [seat for seat, rank in zip(stored, proven, strict=True) if seat.rank != rank]
            for seat in changed:
                seat.rank = proven[seat.index]
                seat.save(update_fields=["rank"])
            if changed or _winner(seats, ranks) != game.winner_id:
                game.winner_id = _winner(seats, ranks)
                game.save(update_fields=["winner"])
                corrected += 1
            computer = any(is_computer(user_id) for user_id in seats)
            # Left or timed out before anybody acted: the game counts for no one.
            unplayed = game.acted_at is None and entries[-1]["kind"] in history.FORFEITS
            if ranks is not None and not computer and not unplayed and game.pool:
                results.append(_result(game, seats, ranks, None if outcome is None else outcome.points))
        _ratings_rewrite(rankings_rebuild(results))
    return {"games": len(results), "corrected": corrected}


def _ratings_rewrite(changes: dict[int, Changes]) -> None:
    """Give every seat of a finished match its rating before and after as rebuilt (none in matches not rated)."""
    rewritten = []
    seats = Seat.objects.filter(game__status=Game.Status.FINISHED).only("game", "user", "rating_before", "rating_after")
    for seat in seats.iterator(chunk_size=2000):
        before, after = changes.get(seat.game_id, {}).get(seat.user_id, (None, None))
        if (seat.rating_before, seat.rating_after) != (before, after):
            seat.rating_before, seat.rating_after = before, after
            rewritten.append(seat)
    Seat.objects.bulk_update(rewritten, ["rating_before", "rating_after"], batch_size=500)
