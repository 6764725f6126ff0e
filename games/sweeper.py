"""Deadlines are data: one thread per server process ends the games whose deadline has passed.

Each tick is one indexed query whatever the number of games; the row locks (skip_locked) let several
processes sweep at once without ending a game twice.
"""

import logging
import threading

from django.conf import settings
from django.db import close_old_connections

logger = logging.getLogger(__name__)

_started = threading.Lock()
_thread: threading.Thread | None = None


def sweep_forever(stop: threading.Event) -> None:
    from .services import game_expire_due

    while not stop.wait(settings.TAB_SWEEP_INTERVAL):
        try:
            close_old_connections()
            while game_expire_due() > 0:
                pass
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
