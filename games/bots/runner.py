"""Computer players seated in matches: accounts of their own, and a worker that plays their turns through the same
services as a person, within the match's turn deadline.

A computer player is an account in the "computer players" group (accounts/nicks.py), one per level
(`computer_user`). When a change of a
match leaves a computer on turn, the change schedules its move once committed (`after_change`); a server process that
starts picks up the matches that were waiting for a computer (`resume`). Each process thinks about one move at a time
(one worker thread), so that computers never take the CPU from the people playing.
"""

import asyncio
import logging
import random
import secrets
import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db import close_old_connections, connection, transaction
from django.utils import timezone

from accounts.nicks import COMPUTER_PLAYERS, is_computer, nick_of

from . import LEVELS, SEARCH, Budget, choose

logger = logging.getLogger(__name__)

# A computer acts this long before its deadline at the latest, whatever its level would like.
DEADLINE_MARGIN = timedelta(seconds=2)
# Tries to act on a match that changed while the computer thought (the action it chose no longer fits).
ATTEMPTS = 5

_LEVEL_OF_NAME = {name: level for level, name in LEVELS.items()}

# How long a server's shutdown waits for the computers' moves in progress.
SHUTDOWN_WAIT = 10.0

_executor: ThreadPoolExecutor | None = None
# Moves scheduled and not yet played or given up, under `_settled`.
_pending = 0
_settled = threading.Condition()
_rng = secrets.SystemRandom()


def computer_user(level: int):
    """Return the account of the computer player of `level`, made on first use (it can never log in)."""
    User = get_user_model()
    user, created = User.objects.get_or_create(username=f"computer-{LEVELS[level]}")
    if created:
        user.set_unusable_password()
        user.save(update_fields=["password"])
        user.groups.add(Group.objects.get_or_create(name=COMPUTER_PLAYERS)[0])
    return user


def level_of(user_id: int | None) -> int | None:
    """Return the level of the computer player with this account, or None for a person."""
    if not is_computer(user_id):
        return None
    return _LEVEL_OF_NAME.get(nick_of(user_id).removeprefix("computer-"))


def after_change(public_id: str, user_on_turn: int | None) -> None:
    """Called by the services inside a change: once it commits, let the computer on turn, if any, play."""
    if is_computer(user_on_turn):
        transaction.on_commit(lambda: schedule(public_id), robust=True)


def schedule(public_id: str) -> None:
    global _executor, _pending
    with _settled:
        if _executor is None:
            _executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="computer-player")
        _pending += 1
    _executor.submit(_play, public_id)


def settle(timeout: float) -> bool:
    """Wait until every move scheduled so far, and the moves those schedule in turn, are played or given up; return
    whether that happened within `timeout` seconds. A server process's shutdown step (`settle_at_shutdown`),
    so that a move being thought is played before the process goes."""
    with _settled:
        return _settled.wait_for(lambda: _pending == 0, timeout)


async def settle_at_shutdown() -> None:
    """A server's shutdown step: let the computers finish the moves they are thinking about, for a few seconds."""
    if not await asyncio.to_thread(settle, SHUTDOWN_WAIT):
        logger.warning("computer players still thinking at shutdown: their matches resume at the next start")


def resume() -> int:
    """Schedule the moves of the computers on turn in matches in play (after a restart); return how many."""
    from games.models import Game

    from ..services import seat_on_turn

    scheduled = 0
    for game in Game.objects.filter(status=Game.Status.PLAYING).prefetch_related("seats").iterator(chunk_size=500):
        if is_computer(seat_on_turn(game)[1]):
            schedule(game.public_id)
            scheduled += 1
    return scheduled


async def resume_in_background() -> None:
    """A server's start-up step: resume the computers' moves, without holding up the start."""
    asyncio.get_running_loop().run_in_executor(None, _resume_logged)


def _resume_logged() -> None:
    close_old_connections()
    try:
        resumed = resume()
        if resumed:
            logger.info("resumed the moves of %d computer players", resumed)
    except Exception:
        logger.exception("resuming the computer players failed")
    finally:
        connection.close()


def _play(public_id: str) -> None:
    """Play the computer's turns in the match, as long as a computer is on turn."""
    from games.models import Game

    from ..rules import find_engine
    from ..services import GameError, game_act, seat_on_turn

    try:
        close_old_connections()
        # One move a call: the change it makes schedules the next one, if a computer is still on turn.
        for _ in range(ATTEMPTS):
            game = Game.objects.filter(public_id=public_id, status=Game.Status.PLAYING).first()
            if game is None:
                return
            seat, user_id = seat_on_turn(game)
            level = level_of(user_id)
            if seat is None or level is None:
                return
            engine = find_engine(game.kind)
            state = engine.state_from_json(game.state)
            think = settings.COMPUTER_THINK_MS / 1000 if level == SEARCH else 0.0
            if game.deadline is not None:
                think = min(think, max(0.0, (game.deadline - DEADLINE_MARGIN - timezone.now()).total_seconds()))
            action = choose(engine, state, seat, level, random.Random(_rng.random()), Budget(seconds=think))
            try:
                game_act(public_id=public_id, user_id=user_id, action=action)
                return
            except GameError as error:
                logger.info("computer player in %s: %s; thinking again", public_id, error)
    except Exception:
        logger.exception("the computer player of %s failed", public_id)
    finally:
        # The worker may stay idle for long: it holds no connection meanwhile.
        connection.close()
        _done()


def _done() -> None:
    global _pending
    with _settled:
        _pending -= 1
        _settled.notify_all()
