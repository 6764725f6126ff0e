"""The Fish tournaments of the player protocol: joins, placements and moves, and what every request reads.

A tournament's game is a match of the platform (games/services.py), opened at its first join with as many seats as
players, each taken by the next join; the last one starts it. The platform applies the rules through the game's
engine, times each turn out by its deadlines (FISH_TURN_TIMEOUT: the player on turn is removed) and keeps the log and
the result. This module adds what the protocol says beyond the rules: tokens, the order in which a request's faults
are answered, and the removal of a player whose placement or move is refused, in the same transaction as the refusal.

Every change holds the game's row locked (or, before the game exists, the tournament's), so requests on one
tournament are applied one at a time. The services return refusals that changed something (a removal) instead of
raising them, so that the change commits; the others are raised.
"""

import hashlib
import secrets
from dataclasses import dataclass
from datetime import datetime
from functools import cached_property
from typing import Any
from urllib.parse import urlencode

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Count
from django.urls import reverse
from django.utils import timezone

from accounts.nicks import is_computer
from accounts.services import ANONYMOUS, anonymous_players
from core.prepared import Prepared
from games import lobby, positions, publication, store
from games.lobby import Seek
from games.models import Game, GameEvent, Seat
from games.rules.fish import COLOURS, ENGINE, BadTile, Move, Place, State, board_from_seed
from games.services import GameError, game_act, game_overdue, game_remove, match_open, match_seat

from .models import Entrant, Tournament
from .protocol import Fields, FishError

FULL = "the tournament is full: its game has started or is over; join another tournament_id"
WHY = {
    "rule": "for a refused placement or move",
    "timeout": "for not placing or moving within the turn's time",
}


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def tournament_key(name: str) -> str:
    """Return what a tournament is found by: the SHA-256 of its exact name (any text of 1 to 64 characters)."""
    return hashlib.sha256(name.encode()).hexdigest()


def tournament_channel(name: str) -> str:
    """The publication channel of a tournament's seats being taken (its game's changes are the game's)."""
    return f"fish-tournament-{tournament_key(name)[:32]}"


def tournament_join(*, name: str, players: int | None, user_id: int | None = None) -> tuple[str, str]:
    """Add a player to the tournament `name`, made by this first join (for `players`, default 2, with a fresh
    board); the last seat taken starts its game. Return the player's token (shown only now) and colour. `user_id` is
    a signed-in player's account (the web page's); protocol clients play as the anonymous account of their seat."""
    with transaction.atomic():
        tournament = _locked(name)
        if tournament is None and (tournament := _tournament_create(name, players or 2, user_id)) is not None:
            seat = 0
        else:
            # Made by an earlier join, or meanwhile by one in another process: this join takes its next seat.
            tournament = tournament or _locked(name)
            assert tournament is not None
            seat = Entrant.objects.filter(tournament=tournament).count()
            if seat >= tournament.players:
                raise FishError("Tournament_Error", FULL)
            taken = list(Seat.objects.filter(game_id=tournament.game_id).values_list("user", flat=True))
            user = user_id if user_id is not None and user_id not in taken else anonymous_players(seat + 1)[seat]
            try:
                game = match_seat(public_id=tournament.game.public_id, user_id=user)
            except GameError:
                raise FishError("Tournament_Error", FULL) from None
            if game.status == Game.Status.PLAYING:
                _rank_if_signed_in(game)
        token = secrets.token_hex(32)
        Entrant.objects.create(tournament=tournament, seat=seat, token=token_hash(token))
        publication.announce_on_commit(tournament_channel(name))
    return token, COLOURS[seat]


def _locked(name: str) -> Tournament | None:
    locking = Tournament.objects.select_for_update(of=("self",)).select_related("game")
    return locking.filter(key=tournament_key(name)).first()


def _tournament_create(name: str, players: int, user_id: int | None) -> Tournament | None:
    """Make the tournament with its first player's seat; None if a join in another process made it meanwhile."""
    seed = secrets.randbelow(2**63)
    user = user_id if user_id is not None else anonymous_players(1)[0]
    try:
        with transaction.atomic():
            game = match_open(
                kind=ENGINE.kind,
                options={"seed": seed},
                user_ids=[user],
                seat_count=players,
                turn_seconds=settings.FISH_TURN_TIMEOUT,
            )
            return Tournament.objects.create(
                name=name.replace("\x00", "\ufffd"), key=tournament_key(name), players=players, seed=seed, game=game
            )
    except IntegrityError:
        return None


def _rank_if_signed_in(game: Game) -> None:
    """Count a game for the rankings when every seat is a person's own account (joined from the web page)."""
    names = dict(Seat.objects.filter(game=game).values_list("user_id", "user__username"))
    if all(name not in ANONYMOUS and not is_computer(user) for user, name in names.items()):
        Game.objects.filter(pk=game.pk).update(pool="web")


@dataclass
class Reading:
    """What a request's token names: its seat, its tournament's game and where it stands (its stored position, read
    as the rules' state only by the requests that need one)."""

    seat: int
    players: int
    seed: int
    public_id: str
    status: str
    position: dict[str, Any] | None  # the engine's JSON of the game in play; None until the game starts
    joined: int  # how many players have joined
    deadline: datetime | None  # when the turn on ends
    kept: State | None = None  # the position's rules state as this process kept it, shared with other reads

    @cached_property
    def state(self) -> State | None:
        """The position as the rules' state, never to be changed (it may be shared with other reads)."""
        if self.kept is not None:
            return self.kept
        return ENGINE.state_from_json(self.position) if self.position is not None else None

    def board(self) -> list[list[int]]:
        return self.position["board"] if self.position is not None else board_from_seed(self.seed)

    def is_running(self) -> bool:
        return self.status == Game.Status.PLAYING and self.position is not None

    def turn(self) -> int | None:
        turn = self.position["turn"] if self.is_running() and self.position is not None else None
        return None if turn is None else COLOURS.index(turn)

    def removed(self) -> bool:
        return self.position is not None and COLOURS[self.seat] in self.position["removed"]


_READ_COLUMNS = (
    "seat",
    "tournament__players",
    "tournament__seed",
    "tournament__game__public_id",
    "tournament__game__status",
    "tournament__game__state",
    "tournament__game_id",
    "tournament__game__deadline",
    "tournament_id",
)


# Every request but a join reads this first: built once (clients poll, and building a query costs many times what
# running it does).
_POSITION = _READ_COLUMNS.index("tournament__game__state")
_read_query = Prepared(
    lambda token: Entrant.objects.filter(token=token).order_by().values_list(*_READ_COLUMNS),
    [(Entrant._meta.get_field("token"), "stand-in")],
    unconverted=(_POSITION,),  # decoded only if it is not the position this process kept
)


def reading(token: str) -> Reading:
    """Return what the token names, or raise Incorrect_Token (never issued, or its player was removed)."""
    row = _read_query.first(token_hash(token))
    if row is None:
        raise FishError("Incorrect_Token", "this user_token was not issued by this server")
    seat, players, seed, public_id, status, text, game_id, deadline, tournament_id = row
    kept = positions.peek(public_id, text) if public_id is not None else None
    position, state = kept if kept is not None else (_read_query.convert(_POSITION, text), None)
    joined = players if position else Entrant.objects.filter(tournament_id=tournament_id).count()
    found = Reading(seat, players, seed, public_id, status, position or None, joined, deadline, state)
    if found.removed():
        raise _removed(game_id, seat)
    return found


def _removed(game_id: int, seat: int) -> FishError:
    user = Seat.objects.filter(game_id=game_id, index=seat).values_list("user", flat=True).first()
    data = (
        GameEvent.objects.filter(game_id=game_id, kind=GameEvent.Kind.REMOVE, player_id=user)
        .values_list("data", flat=True)
        .last()
    )
    why = WHY.get((data or {}).get("why", ""), "")
    return FishError(
        "Incorrect_Token", f"{COLOURS[seat]} was removed from the game {why}".rstrip() + "; this token plays no more"
    )


def state_json(reading: Reading) -> dict[str, Any]:
    """Return the protocol's STATE: every player who has joined, in join order, and the board."""
    if reading.position is None:
        players = [{"color": COLOURS[seat], "score": 0, "places": []} for seat in range(reading.joined)]
        return {"players": players, "board": reading.board()}
    return {"players": reading.position["players"], "board": reading.position["board"]}


def _action(kind: str, values: tuple[int, ...]) -> Place | Move:
    if kind == "place":
        return Place(values[0], values[1])
    return Move((values[0], values[1]), (values[2], values[3]))


def penguin_act(*, token: str, kind: str, fields: Fields) -> dict[str, Any] | FishError:
    """Place (`kind` "place") or move a penguin; return the state after it, or the refusal, which removes the sender
    when its game is running. The checks come in the protocol's order: the token, the fields' types, the game's
    phase and turn, the tiles, the rest of the rules. Refusals are returned, not raised: what a refusal changed (a
    removal, a turn timed out) commits with it, each change in its service's own transaction."""
    try:
        return _penguin_act(token, kind, fields)
    except FishError as error:
        return error


def current(token: str) -> Reading:
    """What the token names now (`reading`), its game's turn timed out first if its time is up: a turn whose time is
    up is over, whether or not the sweeper has come to it yet, for the checks and reads as for the actions (a check
    says what the action would do now)."""
    found = reading(token)
    if found.is_running() and found.deadline is not None and found.deadline <= timezone.now():
        game_overdue(public_id=found.public_id)
        found = reading(token)
    return found


def _penguin_act(token: str, kind: str, fields: Fields) -> dict[str, Any]:
    found = current(token)
    running = found.is_running()
    user = store.seated(found.public_id)[found.seat] if running else None
    try:
        if fields.error is not None:
            raise fields.error
        if not running:
            over = found.status == Game.Status.FINISHED
            raise FishError("Invalid_Action", "the game is over" if over else "the game has not started yet")
        turn = found.turn()
        not_yours = f"it is {COLOURS[turn]}'s turn, not {COLOURS[found.seat]}'s" if turn is not None else ""
        try:
            action = _action(kind, fields.values)
            acted = game_act(public_id=found.public_id, user_id=user, action=action, not_your_turn=not_yours)
        except GameError as error:
            error_type = "Invalid_Coordinate" if isinstance(error.rule, BadTile) else "Invalid_Action"
            raise FishError(error_type, str(error)) from None
    except FishError as error:
        if not running:
            raise
        try:
            game_remove(public_id=found.public_id, user_id=user, why="rule")
        except GameError:
            raise error from None  # the game changed meanwhile (it ended, or the player was removed already)
        raise FishError(error.error_type, f"{error}; {COLOURS[found.seat]} is removed from the game") from None
    return {"players": acted.position["players"], "board": acted.position["board"]}


def check(found: Reading, kind: str, fields: Fields) -> bool:
    """Return whether the placement or move would be made now (the same checks as `penguin_act`, changing nothing)."""
    if not found.is_running() or found.turn() != found.seat:
        return False
    assert found.state is not None
    values = fields.values
    if kind == "place":
        return found.state.is_legal_placement(found.seat, values[0], values[1])
    return found.state.is_legal_move(found.seat, (values[0], values[1]), (values[2], values[3]))


def moves_json(moves: list[Move]) -> list[dict[str, Any]]:
    return [
        {"start": {"row": move.start[0], "col": move.start[1]}, "end": {"row": move.end[0], "col": move.end[1]}}
        for move in moves
    ]


def moves_for_color(found: Reading, color: str) -> list[dict[str, Any]]:
    if color not in COLOURS[: found.players]:
        raise FishError(
            "Unknown_Color", f"{color[:20]!r} is not a colour of this game ({', '.join(COLOURS[: found.players])})"
        )
    seat = COLOURS.index(color)
    if found.state is None or found.state.removed[seat]:
        return []
    return moves_json(found.state.moves_of(seat))


def moves_for_location(found: Reading, row: int, col: int) -> list[dict[str, Any]]:
    state = found.state if found.state is not None else State.new(found.board(), found.players)
    try:
        state.check_tile(row, col)
    except BadTile as error:
        raise FishError("Invalid_Coordinate", str(error)) from None
    return moves_json(state.moves_from(row, col))


def game_over(found: Reading) -> dict[str, Any]:
    if found.status != Game.Status.FINISHED:
        return {"is_game_over": False, "winners": []}
    ranks = Seat.objects.filter(game__public_id=found.public_id).order_by("index").values_list("rank", flat=True)
    return {"is_game_over": True, "winners": [COLOURS[seat] for seat, rank in enumerate(ranks) if rank == 1]}


# --- What the page shows ---------------------------------------------------------------------------------------------


def _player_name(username: str) -> str:
    return "a protocol client" if username in ANONYMOUS else username


def tournament_view(name: str) -> dict[str, Any] | None:
    """Return a tournament as its page shows it to players and spectators (no token needed: nothing here is secret),
    or None if there is none of that name."""
    row = (
        Tournament.objects.filter(key=tournament_key(name))
        .values_list("players", "seed", "game_id", "game__public_id", "game__status", "game__state", "game__deadline")
        .first()
    )
    if row is None:
        return None
    players, seed, game_id, public_id, status, state_json, deadline = row
    state = ENGINE.state_from_json(state_json) if state_json else None
    seated = Seat.objects.filter(game_id=game_id).order_by("index")
    names = list(seated.values_list("user_id", "user__username", "rank"))
    removals = dict(
        GameEvent.objects.filter(game_id=game_id, kind=GameEvent.Kind.REMOVE).values_list("player__username", "data")
    )
    board = state.board if state is not None else board_from_seed(seed)
    seats = []
    for seat in range(players):
        joined = seat < len(names)
        username = names[seat][1] if joined else ""
        removed = state is not None and state.removed[seat]
        seats.append(
            {
                "color": COLOURS[seat],
                "joined": joined,
                "name": _player_name(username) if joined else "",
                "computer": joined and is_computer(names[seat][0]),
                "score": state.scores[seat] if state is not None else 0,
                "places": [{"row": r, "col": c} for r, c in state.penguins[seat]] if state is not None else [],
                "removed": removed,
                "why": WHY.get((removals.get(username) or {}).get("why", ""), "") if removed else "",
            }
        )
    finished = status == Game.Status.FINISHED
    return {
        "tournament": name,
        "game": public_id,
        "status": status,
        "phase": state.phase if state is not None else "waiting",
        "turn": COLOURS[state.turn] if state is not None and state.turn is not None and not finished else None,
        "deadline": deadline.isoformat() if deadline is not None and not finished else None,
        "turn_seconds": settings.FISH_TURN_TIMEOUT,
        "players": seats,
        "board": board,
        "winners": [COLOURS[seat] for seat, (_, _, rank) in enumerate(names) if rank == 1] if finished else [],
    }


def seat_computer(*, name: str, level: int) -> str:
    """Seat a computer player in the tournament's next free seat (the one of `level`, or of another level when that
    one plays here already); return its colour. It plays through the services, within the turn's time."""
    from games.bots import LEVELS
    from games.bots.runner import computer_user

    with transaction.atomic():
        tournament = _locked(name)
        if tournament is None:
            raise FishError("Tournament_Error", "there is no tournament of that name: join it first")
        taken = set(Seat.objects.filter(game_id=tournament.game_id).values_list("user", flat=True))
        for choice in (level, *LEVELS):
            computer = computer_user(choice)
            if computer.pk not in taken:
                return tournament_join(name=name, players=None, user_id=computer.pk)[1]
        raise FishError("Tournament_Error", "every computer player plays in this tournament already")


def _waiting(limit: int) -> list[tuple[str, int, int, datetime]]:
    """The tournaments that wait for players, newest first: name, players, seats taken, made when."""
    waiting = (
        Tournament.objects.filter(game__status=Game.Status.WAITING)
        .annotate(joined=Count("entrants"))
        .order_by("-created_at")
        .values_list("name", "players", "joined", "created_at")[:limit]
    )
    return list(waiting)


def tournaments_waiting(limit: int = 20) -> list[dict[str, Any]]:
    """Return the tournaments that wait for players, newest first: what the page offers to join."""
    return [{"tournament": name, "players": players, "joined": joined} for name, players, joined, _ in _waiting(limit)]


def lobby_seeks() -> list[Seek]:
    """The tournaments that wait for players, as the lobby lists them."""
    play = reverse("play", args=["fish"])
    return [
        Seek(
            who=f"tournament {name}",
            what=f"{joined} of {players} players",
            url=f"{play}?{urlencode({'tournament': name})}",
            action=f"Join {name}",
            since=since,
        )
        for name, players, joined, since in _waiting(lobby.SHOWN)
    ]
