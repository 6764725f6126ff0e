"""Plakoto, the Greek backgammon where a piece landing on a lone opposing piece pins it: the board, the dice and the
legal moves, as the Plakoto API's page of the README describes them.

The 24 points are numbered 1 … 24 for both players. White (W) starts with its 15 pieces on 24, its *mother* point,
and moves down to its home 1 … 6, then off (0); black (B) starts on 1 and moves up to its home 19 … 24, then off
(25). A point's pieces form a stack, bottom first; a pinned piece is at the bottom, its pinners above it.

A turn is a roll of two dice (four moves on a double), each move one piece by one die. The whole roll must be used
when it can be: only the sequences that use the most dice are allowed (a move that ends the game uses them all), and
when only one die can be used, the larger. Dice are rolled by the server when a turn begins: `roll_due` says a roll
is due, and the platform applies it at once (`Engine.automatic`); a player who then cannot move passes.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from functools import cache
from typing import Any, Final

from .base import Engine, IllegalAction, Outcome, Played

WHITE: Final = "W"
BLACK: Final = "B"
SIDES: Final = (WHITE, BLACK)  # seat 0 is white, who has the first turn
PIECES: Final = 15
MOTHER: Final = {WHITE: 24, BLACK: 1}
DIRECTION: Final = {WHITE: -1, BLACK: 1}
OFF: Final = {WHITE: 0, BLACK: 25}
HOME: Final = {WHITE: range(1, 7), BLACK: range(19, 25)}
AWAY: Final = {WHITE: range(7, 25), BLACK: range(1, 19)}  # the points outside each side's home
DIE_FACES: Final = (1, 2, 3, 4, 5, 6)
# The 21 different rolls of two dice and their probabilities (a double is one way in 36, the others two).
ROLLS: Final = tuple((a, b) for a in DIE_FACES for b in DIE_FACES if a >= b)
ROLL_PROBABILITY: Final = {roll: Fraction(1 if roll[0] == roll[1] else 2, 36) for roll in ROLLS}

type Piece = tuple[str, int]  # (colour, number 1 … 15)
# A point's pieces, bottom first. Immutable: a move puts new stacks in place of the two it changes, so that a copy of a
# position shares the rest, and a position kept between actions (thousands of them) is nearly all tuples of atoms,
# which the garbage collector stops looking at.
type Stack = tuple[Piece, ...]
# What tells apart the positions of one turn: the height of each point's stack (`State.shape`).
type PositionKey = tuple[int, ...]


class IllegalMove(IllegalAction):
    """A move the rules refuse; the message is the API's."""


def other(side: str) -> str:
    return BLACK if side == WHITE else WHITE


def distance_off(side: str, point: int) -> int:
    """Return how far a piece of `side` on `point` is from bearing off."""
    return point if side == WHITE else 25 - point


@dataclass(frozen=True, slots=True)
class Step:
    """One move of a piece by one die: from a point to a point, or off the board (0 for W, 25 for B)."""

    origin: int
    destination: int
    die: int


def _dice_key(dice: list[int] | tuple[int, ...]) -> tuple[int, ...]:
    return tuple(sorted(dice, reverse=True))


@dataclass(slots=True)
class State:
    """A position of a game: the points' stacks, the pieces borne off, whose turn, the dice, the end."""

    points: list[Stack] = field(default_factory=lambda: [() for _ in range(25)])
    off: dict[str, list[int]] = field(default_factory=lambda: {WHITE: [], BLACK: []})
    turn: str | None = WHITE
    dice: tuple[int, int] | None = None
    dice_left: list[int] = field(default_factory=list)
    roll_due: bool = True
    passes: list[dict[str, Any]] = field(default_factory=list)
    result: str | None = None  # "W", "B" or "D" (a draw)
    score: int | None = None  # 1 or 2 for a win, 0 for a draw
    _plan: dict[tuple[int, int], int] | None = field(default=None, repr=False, compare=False)
    # The most dice each position of this roll can use (`_most`, by `shape`), shared by every step and copy of the
    # turn: a plan after a step is then mostly known from the plan before it. A new roll starts it afresh.
    _turn_memo: dict[tuple[PositionKey, tuple[int, ...]], int] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def new(cls) -> State:
        state = cls()
        state.points[MOTHER[WHITE]] = tuple((WHITE, number) for number in range(1, PIECES + 1))
        state.points[MOTHER[BLACK]] = tuple((BLACK, number) for number in range(1, PIECES + 1))
        return state

    # --- The board ---------------------------------------------------------------------------------------------

    def top(self, point: int) -> str | None:
        stack = self.points[point]
        return stack[-1][0] if stack else None

    def pinned(self, point: int) -> str | None:
        """Return the colour of the piece pinned on `point`, or None."""
        stack = self.points[point]
        if len(stack) >= 2 and stack[0][0] != stack[-1][0]:
            return stack[0][0]
        return None

    def door_of(self, point: int) -> str | None:
        """Return the side that holds a door on `point` (two pieces or more, or a pinner), or None."""
        stack = self.points[point]
        if not stack:
            return None
        owner = stack[-1][0]
        if len(stack) >= 2:
            return owner
        return None

    def count(self, side: str) -> int:
        """Return how many of `side`'s pieces are on the board."""
        return sum(1 for stack in self.points for piece in stack if piece[0] == side)

    def mother_pinned(self, side: str) -> bool:
        """Return whether `side`'s last piece on its starting point is pinned there."""
        stack = self.points[MOTHER[side]]
        return self.pinned(MOTHER[side]) == side and sum(piece[0] == side for piece in stack) == 1

    def _may_bear_off(self, side: str) -> bool:
        """Return whether every piece of `side` on the board is home and free. A stack is one side's pieces, or a
        pinned piece under the other side's: its bottom and its top tell whose pieces it holds."""
        points = self.points
        for point in AWAY[side]:
            stack = points[point]
            if stack and (stack[0][0] == side or stack[-1][0] == side):
                return False
        for point in HOME[side]:
            stack = points[point]
            if len(stack) >= 2 and stack[0][0] == side and stack[-1][0] != side:
                return False  # pinned
        return True

    def _farthest(self, side: str) -> int:
        """Return the distance from off of `side`'s farthest piece on the board (0 when none)."""
        return max((distance_off(side, point) for point in range(1, 25) if self._has(side, point)), default=0)

    def _has(self, side: str, point: int) -> bool:
        return any(piece[0] == side for piece in self.points[point])

    # --- Single moves ------------------------------------------------------------------------------------------

    def steps(self, side: str, die: int) -> Iterator[Step]:
        """Yield every single move of `side` by `die` that the board allows (turn and sequence rules aside), in
        ascending order of origin."""
        for origin, destination in self._targets(side, die):
            yield Step(origin, destination, die)

    def _targets(self, side: str, die: int, first: bool = False) -> list[tuple[int, int]]:
        """Return `steps(side, die)` as (origin, destination) pairs: the search of a turn's sequences asks often.
        With `first`, only the first of them, if any (whether the die can be used)."""
        points = self.points
        shift = DIRECTION[side] * die
        found = []
        bearing = None
        for origin in range(1, 25):
            stack = points[origin]
            if not stack or stack[-1][0] != side:
                continue
            destination = origin + shift
            if 1 <= destination <= 24:
                target = points[destination]
                if len(target) < 2 or target[-1][0] == side:  # no door of the other side there (`door_of`)
                    found.append((origin, destination))
                    if first:
                        break
                continue
            if bearing is None:
                bearing = self._may_bear_off(side)
            if not bearing:
                continue
            distance = distance_off(side, origin)
            if die == distance or (die > distance and self._farthest(side) == distance):
                found.append((origin, OFF[side]))
                if first:
                    break
        return found

    def apply_step(self, step: Step) -> None:
        """Move the top piece of `step.origin` (no check: `step` comes from `steps`)."""
        self._make(step.origin, step.destination)

    def _make(self, origin: int, destination: int) -> None:
        """Move the top piece of `origin` to `destination` (a pair of `_targets`), to be taken back by `_unmake`."""
        points = self.points
        stack = points[origin]
        piece = stack[-1]
        points[origin] = stack[:-1]
        if destination == 0 or destination == 25:
            self.off[piece[0]].append(piece[1])
        else:
            points[destination] += (piece,)

    def _unmake(self, origin: int, destination: int) -> None:
        """Take back `_make(origin, destination)`."""
        points = self.points
        if destination == 0 or destination == 25:
            side = WHITE if destination == OFF[WHITE] else BLACK
            points[origin] += ((side, self.off[side].pop()),)
        else:
            stack = points[destination]
            points[origin] += (stack[-1],)
            points[destination] = stack[:-1]

    def copy(self) -> State:
        return State(
            list(self.points),  # the stacks are shared: a move replaces them
            {side: list(numbers) for side, numbers in self.off.items()},
            self.turn,
            self.dice,
            list(self.dice_left),
            self.roll_due,
            [dict(entry) for entry in self.passes],
            self.result,
            self.score,
            # The moves allowed are the same in the copy (and a plan is replaced, never changed in place), and what
            # the turn's positions allow is the same whichever copy asks.
            self._plan,
            self._turn_memo,
        )

    def shape(self) -> PositionKey:
        """Return the height of each point's stack: within one turn (one side moving, the other's pieces where they
        were) it decides the position, the pieces borne off included (15 a side, less those on the board)."""
        return tuple(map(len, self.points))

    # --- The end -----------------------------------------------------------------------------------------------

    def ending(self, mover: str) -> tuple[str, int] | None:
        """Return how the game ends after `mover`'s move, (result, score), or None while it goes on."""
        loser = other(mover)
        if len(self.off[mover]) == PIECES:
            return mover, 2 if not self.off[loser] else 1
        white, black = self.mother_pinned(WHITE), self.mother_pinned(BLACK)
        if not white and not black:
            return None  # nearly always: the rest needs a pinned mother
        if white and black:
            return "D", 0
        for side in (mover, loser):
            if self.mother_pinned(other(side)) and not self._has(side, MOTHER[side]):
                return side, 2
        return None

    # --- Whole turns -------------------------------------------------------------------------------------------

    def plan(self) -> dict[tuple[int, int], int]:
        """Return the moves allowed now to the player on turn, {(origin, destination): die}: those that continue a
        sequence using the most dice of this turn (with the larger die when only one can be used)."""
        if self._plan is None:
            self._plan = {}
            if self.turn is not None and not self.roll_due and self.result is None and self.dice_left:
                # The search moves pieces and takes them back: on a board of its own, since a position may be
                # shared by readers in other threads (games/positions.py), which must never see it change.
                board = State(list(self.points), {side: list(self.off[side]) for side in SIDES})
                self._plan = _allowed(board, self.turn, _dice_key(self.dice_left), self.dice, self._turn_memo)
        return self._plan

    def move(self, origin: int, destination: int) -> Step:
        """Make the player on turn's move from `origin` to `destination` (0 or 25: off); raise IllegalMove."""
        side = self.turn
        if side is None or self.roll_due or self.result is not None:
            raise IllegalMove("Game is not in action.")
        if not 1 <= origin <= 24 or self.top(origin) != side:
            raise IllegalMove("This piece cannot move.")
        die = self.plan().get((origin, destination))
        if die is None:
            raise IllegalMove("This move is illegal.")
        step = Step(origin, destination, die)
        self.apply_step(step)
        self.dice_left.remove(die)
        self.passes = []
        self._plan = None
        ending = self.ending(side)
        if ending is not None:
            self._end(*ending)
        elif not self.dice_left or not self.plan():
            self._next_turn()
        return step

    def _next_turn(self) -> None:
        assert self.turn is not None
        self.turn = other(self.turn)
        self.dice, self.dice_left, self.roll_due, self._plan = None, [], True, None

    def _end(self, result: str, score: int) -> None:
        self.result, self.score = result, score
        self.turn, self.dice, self.dice_left, self.roll_due, self._plan = None, None, [], False, None

    def roll(self, dice: tuple[int, int]) -> bool:
        """Roll the dice of the turn that begins; return False when the player could not move and passed (or the
        game ended in a deadlock): the next roll is then due."""
        side = self.turn
        assert side is not None and self.roll_due
        self.dice, self.dice_left, self.roll_due, self._plan = dice, _roll_dice(dice), False, None
        self._turn_memo = {}
        if self.plan():
            return True
        self.passes.append({"color": side, "dice": list(dice)})
        if not self._could_move(side) and not self._could_move(other(side)):
            self._end("D", 0)
        else:
            self._next_turn()
        return False

    def _could_move(self, side: str) -> bool:
        return any(next(self.steps(side, die), None) is not None for die in DIE_FACES)

    # --- JSON --------------------------------------------------------------------------------------------------

    def to_json(self) -> dict[str, Any]:
        return {
            "points": [[_LABELS.get(piece) or f"{piece[0]}{piece[1]}" for piece in stack] for stack in self.points[1:]],
            "off": {side: list(numbers) for side, numbers in self.off.items()},
            "turn": self.turn,
            "dice": list(self.dice) if self.dice else None,
            "dice_left": list(self.dice_left),
            "roll_due": self.roll_due,
            "passes": [dict(entry) for entry in self.passes],
            "result": self.result,
            "score": self.score,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> State:
        try:
            points: list[Stack] = [()]
            for stack in data["points"]:
                points.append(tuple((piece[0], int(piece[1:])) for piece in stack))
            if len(points) != 25:
                raise ValueError("24 points")
            dice = data["dice"]
            return cls(
                points,
                {side: [int(number) for number in data["off"][side]] for side in SIDES},
                data["turn"],
                (int(dice[0]), int(dice[1])) if dice else None,
                [int(die) for die in data["dice_left"]],
                bool(data["roll_due"]),
                [dict(entry) for entry in data["passes"]],
                data["result"],
                data["score"],
            )
        except (KeyError, TypeError, IndexError, ValueError) as error:
            raise ValueError(f"not a Plakoto state: {error}") from None


# Each piece's name in the JSON of a position ("W1" … "B15"), written once.
_LABELS: Final = {(side, number): f"{side}{number}" for side in SIDES for number in range(1, PIECES + 1)}


def _roll_dice(dice: tuple[int, int]) -> list[int]:
    """Return the dice a roll gives to play, largest first: four of a double."""
    return [dice[0]] * 4 if dice[0] == dice[1] else list(_dice_key(dice))


def _allowed(
    state: State,
    side: str,
    dice: tuple[int, ...],
    rolled: tuple[int, int] | None,
    memo: dict[tuple[PositionKey, tuple[int, ...]], int],
) -> dict[tuple[int, int], int]:
    """Return the moves that continue a sequence using the most dice, {(origin, destination): die}; `memo` holds
    what `_most` found of positions of the same roll. `state` is moved and moved back while it searches."""
    most = _most(state, side, dice, memo)
    if most == 0:
        return {}
    allowed: dict[tuple[int, int], int] = {}
    for die, after in reversed(_splits(dice)):
        for move in state._targets(side, die):
            if move in allowed:
                continue  # a bearing off takes the smallest die that allows it
            if _used(state, side, move, dice, after, memo) == most:
                allowed[move] = die
    # Only one die can be used, of a roll of two different dice: the larger, when it can be.
    full_roll = rolled is not None and rolled[0] != rolled[1] and len(dice) == 2
    if most == 1 and full_roll and any(die == max(dice) for die in allowed.values()):
        allowed = {move: die for move, die in allowed.items() if die == max(dice)}
    return allowed


@cache
def _splits(dice: tuple[int, ...]) -> tuple[tuple[int, tuple[int, ...]], ...]:
    """Return each different die of `dice` with the dice left after it, the largest die first."""
    splits = []
    for die in sorted(set(dice), reverse=True):
        rest = list(dice)
        rest.remove(die)
        splits.append((die, tuple(rest)))
    return tuple(splits)


def _used(
    state: State,
    side: str,
    move: tuple[int, int],
    dice: tuple[int, ...],
    rest: tuple[int, ...],
    memo: dict[tuple[PositionKey, tuple[int, ...]], int],
) -> int:
    """Return the most of `dice` that a sequence beginning with `move` (by the die not in `rest`) uses: all of them
    if the move ends the game."""
    state._make(*move)
    try:
        # The end of a game depends only on the mother points and the pieces borne off (`State.ending`), and the
        # search begins where the game goes on: a move that touches neither cannot end it.
        ends = (move[0] in _MOTHERS or move[1] in _ENDING_DESTINATIONS) and state.ending(side) is not None
        return len(dice) if ends else 1 + _most(state, side, rest, memo)
    finally:
        state._unmake(*move)


_MOTHERS: Final = frozenset(MOTHER.values())
_ENDING_DESTINATIONS: Final = _MOTHERS | frozenset(OFF.values())


def _most(state: State, side: str, dice: tuple[int, ...], memo: dict[tuple[PositionKey, tuple[int, ...]], int]) -> int:
    """Return the most dice of `dice` that `side` can use in a row from `state` (a move that ends the game uses all
    that are left); `memo` remembers the positions of this turn already weighed."""
    if not dice:
        return 0
    if len(dice) == 1:
        # The last die: any move by it uses it, whether or not it ends the game (the first found tells, sooner than
        # the memo would).
        return 1 if state._targets(side, dice[0], first=True) else 0
    key = (state.shape(), dice)
    if key in memo:
        return memo[key]
    best = 0
    for die, after in _splits(dice):
        for move in state._targets(side, die):
            best = max(best, _used(state, side, move, dice, after, memo))
            if best == len(dice):
                memo[key] = best
                return best
    memo[key] = best
    return best


# The chance, roughly, that a single piece is reached by a piece of the other side that is `distance` behind it: a
# die (11 rolls in 36) up to 6, two dice (about 1 in 18) beyond.
_REACH = [0.0] + [11 / 36] * 6 + [2 / 36] * 6


def _exposure(state: State, side: str) -> float:
    """Return what `side`'s single pieces stand to lose, the other side's next roll considered: a pinned piece (15),
    a pinned mother (60, and the game with it)."""
    enemy, step = other(side), DIRECTION[side]
    total = 0.0
    for point in range(1, 25):
        stack = state.points[point]
        if len(stack) != 1 or stack[0][0] != side:
            continue
        # The other side moves against `side`'s direction: its pieces that can reach `point` stand ahead of it.
        risk = sum(
            _REACH[distance]
            for distance in range(1, 13)
            if 1 <= (behind := point + step * distance) <= 24 and state.top(behind) == enemy
        )
        total += min(1.0, risk) * (60 if point == MOTHER[side] else 15)
    return total


# --- The engine: Plakoto behind the platform's interface (games/rules/base.py) --------------------------------------


@dataclass(frozen=True, slots=True)
class Roll:
    """The roll that begins a turn, made by the server (`Engine.automatic`): at random, or with known dice (a
    replay, a search)."""

    dice: tuple[int, int] | None = None


@dataclass(frozen=True, slots=True)
class Move:
    """Move the top piece of `origin` to `destination` (0 or 25: off the board)."""

    origin: int
    destination: int


type Action = Roll | Move


def _point(data: Mapping[str, Any], key: str) -> int:
    value = data.get(key)
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 25:
        raise IllegalMove(f"{key} is a point from 0 to 25")
    return value


def _dice(value: object) -> tuple[int, int]:
    if not isinstance(value, list | tuple) or len(value) != 2:
        raise IllegalMove("dice are two numbers from 1 to 6")
    if not all(isinstance(die, int) and not isinstance(die, bool) and 1 <= die <= 6 for die in value):
        raise IllegalMove("dice are two numbers from 1 to 6")
    return (value[0], value[1])


class PlakotoEngine:
    """Plakoto for two seats: W (seat 0, first to play) and B."""

    kind = "plakoto"
    title = "Plakoto"
    min_seats = 2
    scored = True  # a single win scores 1, a double 2
    max_seats = 2
    chance = True
    action_labels: Mapping[str, str] = {"roll": "rolled the dice", "move": "moved a piece"}

    def options(self, raw: Mapping[str, Any]) -> dict[str, Any]:
        return {}

    def variant(self, options: Mapping[str, Any]) -> str:
        return ""

    def variant_label(self, variant: str) -> str:
        return ""

    def new(self, seats: int, options: Mapping[str, Any], rng: random.Random) -> State:
        if seats != 2:
            raise ValueError("Plakoto is played by two")
        return State.new()

    def seats(self, state: State) -> int:
        return 2

    def to_act(self, state: State) -> int | None:
        return None if state.result is not None or state.turn is None else SIDES.index(state.turn)

    def automatic(self, state: State) -> Action | None:
        return Roll() if state.roll_due and state.result is None and state.turn is not None else None

    def legal_actions(self, state: State, seat: int) -> list[Action]:
        if state.result is not None or state.turn != SIDES[seat]:
            return []
        if state.roll_due:
            return [Roll()]
        return [Move(origin, destination) for origin, destination in sorted(state.plan())]

    def apply(self, state: State, seat: int, action: Action, rng: random.Random) -> Played:
        if state.result is not None or state.turn is None:
            raise IllegalMove("Game is not in action.")
        if state.turn != SIDES[seat]:
            raise IllegalMove("It is not your turn.")
        match action:
            case Roll(dice=dice):
                if not state.roll_due:
                    raise IllegalMove("The dice are rolled already.")
                rolled = dice or (rng.randint(1, 6), rng.randint(1, 6))
                moved = state.roll(rolled)
                return Played("roll", {"dice": list(rolled), "passed": not moved})
            case Move(origin=origin, destination=destination):
                step = state.move(origin, destination)
                return Played("move", {"from": step.origin, "to": step.destination, "die": step.die})
        raise IllegalMove("Not an action of Plakoto")

    def chances(self, state: State, seat: int, action: Action) -> list[tuple[Fraction, Action]] | None:
        if not isinstance(action, Roll) or action.dice is not None:
            return None
        return [(ROLL_PROBABILITY[roll], Roll(roll)) for roll in ROLLS]

    def heuristic(self, state: State, seat: int) -> float:
        # The race (pips to bear off), pieces borne off, pinned pieces (a pinned mother most of all), and the single
        # pieces the other side could pin at its next roll (the last one on the starting point most of all).
        side = SIDES[seat]
        score = 0.0
        for each, sign in ((side, 1.0), (other(side), -1.0)):
            pips = sum(
                distance_off(each, point) for point in range(1, 25) for piece in state.points[point] if piece[0] == each
            )
            pinned = sum(1 for point in range(1, 25) if state.pinned(point) == each)
            mother = 60 if state.mother_pinned(each) else 0
            score += sign * (len(state.off[each]) * 10 - pips - 15 * pinned - mother - _exposure(state, each))
        return max(-1.0, min(1.0, score / 150))

    def logged_action(self, played: Played) -> Action:
        data = played.data
        match played.kind:
            case "roll":
                return Roll(_dice(data.get("dice")))
            case "move":
                return Move(_point(data, "from"), _point(data, "to"))
        raise IllegalAction(f"Not an entry of Plakoto's log: {played.kind!r}")

    def remove(self, state: State, seat: int) -> Played | None:
        return None  # a game for two ends when a player goes

    def outcome(self, state: State) -> Outcome | None:
        if state.result is None:
            return None
        if state.result == "D":
            return Outcome.draw(2)
        return Outcome.win(SIDES.index(state.result), 2, "win" if state.score == 1 else "double", state.score)

    def copy(self, state: State) -> State:
        return state.copy()

    def state_to_json(self, state: State) -> dict[str, Any]:
        return state.to_json()

    def state_from_json(self, data: Mapping[str, Any]) -> State:
        return State.from_json(data)

    def action_to_json(self, action: Action) -> dict[str, Any]:
        match action:
            case Roll(dice=None):
                return {"kind": "roll"}
            case Roll(dice=(first, second)):
                return {"kind": "roll", "dice": [first, second]}
            case Move(origin=origin, destination=destination):
                return {"kind": "move", "from": origin, "to": destination}
        raise ValueError(f"not an action of Plakoto: {action!r}")

    def action_from_json(self, data: Mapping[str, Any]) -> Action:
        kind = data.get("kind")
        if kind == "roll":
            return Roll(_dice(data["dice"])) if "dice" in data else Roll()
        if kind == "move":
            return Move(_point(data, "from"), _point(data, "to"))
        raise IllegalAction(f"Unknown action {str(kind)[:40]!r}")


ENGINE: Engine[State, Action] = PlakotoEngine()
