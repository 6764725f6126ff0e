"""Whole games played through the services, for tests that need finished games of any kind (in the test's database,
or in a live server's: `server.manage("shell", "-c", …)`)."""

import random

from games import bots
from games.models import Game
from games.rules import find_engine
from games.services import game_act, match_join, seat_on_turn

from .factories import UserFactory


def finished_game(kind: str, seed: int, seats: int = 2) -> Game:
    """Play a whole game through the services, each seat choosing at random (seat 0 a little better)."""
    engine = find_engine(kind)
    users = [UserFactory() for _ in range(seats)]
    for user in users:
        match = match_join(user_id=user.pk, kind=kind, options={}, pool="analysis", seat_count=seats)
    rng = random.Random(seed)
    for _ in range(3000):
        match.refresh_from_db()
        if match.status == Game.Status.FINISHED:
            return match
        seat, user_id = seat_on_turn(match)
        state = engine.state_from_json(match.state)
        level = bots.GREEDY if seat == 0 and not engine.chance else bots.RANDOM
        action = bots.choose(engine, state, seat, level, rng)
        game_act(public_id=match.public_id, user_id=user_id, action=action)
    raise AssertionError("the game does not end")
