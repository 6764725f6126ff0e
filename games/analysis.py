"""The analysis of finished games (games/bots/analysis.py), made after they end and stored, never while they are
played: a process of its own (`manage.py analyse --follow`, which the server starts at a lower priority) takes the
finished games that have none, the newest first, one at a time. Each costs at most ANALYSIS_POSITIONS positions and
ANALYSIS_SECONDS seconds. Several such processes may run, on one machine or several: each takes a game by making its
Analysis row (one per game: a game taken is nobody else's), and a game taken by a process that stopped before it was
done is taken again after a while (STALE).
"""

import logging
import os
import threading
import time
from datetime import timedelta

from django.conf import settings
from django.db import IntegrityError, close_old_connections, transaction
from django.db.models import Q
from django.utils import timezone

from .bots.analysis import review
from .history import LogError
from .models import Analysis, Game

logger = logging.getLogger(__name__)

# How often a following process looks for newly finished games.
POLL_SECONDS = 2.0


# A game taken this long ago and not analysed yet was left by a process that stopped: another takes it.
STALE = timedelta(minutes=10)


def pending(limit: int = 20) -> list[int]:
    """Return the finished games that were played (they started) and have no analysis yet (nor one in the making),
    newest first."""
    games = Game.objects.filter(status=Game.Status.FINISHED, started_at__isnull=False).filter(
        Q(analysis__isnull=True) | Q(analysis__made_at__isnull=True, analysis__taken_at__lt=timezone.now() - STALE)
    )
    return list(games.order_by("-finished_at", "-pk").values_list("pk", flat=True)[:limit])


def take(game_id: int) -> bool:
    """Take a pending game for this process to analyse; return False if another process has it."""
    now = timezone.now()
    try:
        with transaction.atomic():
            Analysis.objects.create(game_id=game_id, taken_at=now)
        return True
    except IntegrityError:
        # Taken already: again only if the one who took it stopped long ago.
        stale = Analysis.objects.filter(game_id=game_id, made_at__isnull=True, taken_at__lt=now - STALE)
        return stale.update(taken_at=now) == 1


def analyse(game_id: int, *, positions: int | None = None, seconds: float | None = None) -> Analysis:
    """Make and store the analysis of a finished game (again, if it had one); a log that cannot be replayed is
    stored as the analysis's error."""
    game = Game.objects.get(pk=game_id)
    entries = [
        {"seq": event.seq, "kind": event.kind, "player": event.player_id, "data": event.data}
        for event in game.events.order_by("seq")
    ]
    started = time.process_time()
    data, error = None, ""
    try:
        data = review(
            game.kind,
            game.options,
            game.seat_user_ids,
            entries,
            positions=positions or settings.ANALYSIS_POSITIONS,
            seconds=seconds or settings.ANALYSIS_SECONDS,
            seed=game.pk,
        ).to_json()
    except LogError as failure:
        error = str(failure)[:200]
    made = {"data": data, "error": error, "seconds": time.process_time() - started, "made_at": timezone.now()}
    analysis, _ = Analysis.objects.update_or_create(game=game, defaults=made)
    return analysis


def analyse_pending(limit: int | None = None, positions: int | None = None, seconds: float | None = None) -> int:
    """Analyse the finished games that have no analysis, the newest first; return how many were."""
    done = 0
    while limit is None or done < limit:
        games = pending(20 if limit is None else min(20, limit - done))
        if not games:
            break
        for game_id in games:
            if take(game_id):
                _analyse_logged(game_id, positions, seconds)
                done += 1
    return done


def _analyse_logged(game_id: int, positions: int | None, seconds: float | None) -> None:
    try:
        analyse(game_id, positions=positions, seconds=seconds)
    except Exception:
        # A failure of ours must not stop the others, nor come back at every look: it is stored, and logged.
        logger.exception("the analysis of game %s failed", game_id)
        failed = {"data": None, "error": "the analysis failed", "made_at": timezone.now()}
        Analysis.objects.update_or_create(game_id=game_id, defaults=failed)


def follow(stop: threading.Event) -> None:
    """Analyse the games as they finish, until `stop` is set or the process that started this one is gone."""
    parent = os.getppid()
    while not stop.is_set() and os.getppid() == parent:
        try:
            close_old_connections()
            if analyse_pending(limit=20):
                continue
        except Exception:
            # The database may be away for a while: look again later.
            logger.exception("looking for games to analyse failed")
        stop.wait(POLL_SECONDS)
