"""Deadlines are data: one thread per server process ends the games whose deadline has passed.

Each tick is one indexed query whatever the number of games; the row locks (skip_locked) let several
processes sweep at once without ending a game twice.
"""

import logging
import threading
import time

from django.conf import settings
from django.db import close_old_connections

logger = logging.getLogger(__name__)
# What the sweeper does about outages, each said once (its own failures, repeated every tick while the database is
# away, are said once a minute: settings.LOGGING).
clocks = logging.getLogger("games.deadlines")

_started = threading.Lock()
_thread: threading.Thread | None = None


# Empty waiting rooms are deleted about once a minute: they cost nothing meanwhile. Expired sessions of the site,
# about once an hour.
ROOMS_CLEANED_EVERY = 60.0
SESSIONS_CLEANED_EVERY = 3600.0


# A starting process waits this long at most for its first sweep, which makes good an outage before it serves.
FIRST_SWEEP_WAIT = 10.0


def sweep_forever(stop: threading.Event, swept: threading.Event | None = None) -> None:
    from accounts.services import sessions_clean

    from . import publication
    from .services import rooms_clean

    rooms_cleaned = sessions_cleaned = time.monotonic()
    # The first sweep at once: after a restart, the clocks must be made good before anybody reads them.
    paused = False
    while swept is not None or not stop.wait(settings.TAB_SWEEP_INTERVAL):
        try:
            if publication.updates_cut():
                # Players may not see their opponents' moves: no turn runs out meanwhile. Once Redis is back, the
                # first sweep finds none ran for the while, and moves the deadlines later by as much (outage_bridge).
                if not paused:
                    clocks.warning("updates between processes are cut (Redis unreachable): no deadline expires")
                paused = True
                continue
            if paused:
                clocks.warning("updates between processes flow again: deadlines expire again")
            paused = False
            close_old_connections()
            mark_swept()
            expire_due()
            if time.monotonic() - rooms_cleaned >= ROOMS_CLEANED_EVERY:
                rooms_cleaned = time.monotonic()
                rooms_clean()
            if time.monotonic() - sessions_cleaned >= SESSIONS_CLEANED_EVERY:
                sessions_cleaned = time.monotonic()
                sessions_clean()
        except Exception:
            # A database outage must not kill the sweeper: it tries again on the next tick.
            logger.exception("deadline sweep failed")
        finally:
            close_old_connections()
            if swept is not None:
                swept.set()
                swept = None


def mark_swept() -> None:
    """Note that a sweeper runs now; if none ran for a while (an outage), the deadlines still ahead move as much later
    (`outage_bridge`), which is said once."""
    from .services import outage_bridge

    gap = outage_bridge()
    if gap is not None:
        clocks.warning(
            "no deadline sweep for %.0f s: the deadlines still ahead then move as much later", gap.total_seconds()
        )


def expire_due() -> None:
    """End every game whose deadline has passed, a batch (one transaction) at a time, noting between two batches that
    a sweeper runs: ending thousands of games at once keeps this one busy for seconds, which are no outage. Unnoted,
    the next tick took them for one, and moved every deadline still ahead as much later, again and again while the
    games fell due (10,000 draughts clocks running out within a minute ended 10 s late on average)."""
    from .services import game_expire_due

    while game_expire_due() > 0:
        mark_swept()


def start() -> None:
    """Start this process's sweeper, once, and wait for its first sweep (a few seconds at most): an outage of ours
    is made good before the process serves anyone."""
    global _thread
    with _started:
        if _thread is None or not _thread.is_alive():
            swept = threading.Event()
            _thread = threading.Thread(
                target=sweep_forever, args=(threading.Event(), swept), name="tab-deadline-sweeper", daemon=True
            )
            _thread.start()
            swept.wait(FIRST_SWEEP_WAIT)
