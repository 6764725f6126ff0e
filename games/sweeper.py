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

_started = threading.Lock()
_thread: threading.Thread | None = None


# Empty waiting rooms are deleted about once a minute: they cost nothing meanwhile.
ROOMS_CLEANED_EVERY = 60.0


def sweep_forever(stop: threading.Event) -> None:
    from .services import game_expire_due, outage_bridge, rooms_clean

    rooms_cleaned = time.monotonic()
    while not stop.wait(settings.TAB_SWEEP_INTERVAL):
        try:
            close_old_connections()
            gap = outage_bridge()
            if gap is not None:
                logger.warning(
                    "no deadline sweep for %.0f s: the deadlines still ahead then move as much later",
                    gap.total_seconds(),
                )
            while game_expire_due() > 0:
                pass
            if time.monotonic() - rooms_cleaned >= ROOMS_CLEANED_EVERY:
                rooms_cleaned = time.monotonic()
                rooms_clean()
        except Exception:
            # A database outage must not kill the sweeper: it tries again on the next tick.
            logger.exception("deadline sweep failed")
        finally:
            close_old_connections()


def start() -> None:
    """Start this process's sweeper, once."""
    global _thread
    with _started:
        if _thread is None or not _thread.is_alive():
            _thread = threading.Thread(
                target=sweep_forever, args=(threading.Event(),), name="tab-deadline-sweeper", daemon=True
            )
            _thread.start()
