"""Logging filters for outages: a dependency that is down fails on every request, and one line a minute says it."""

import logging
import threading
import time

QUIET_SECONDS = 60
clock = time.monotonic


class OncePerMinute(logging.Filter):
    """Let one record through per logger and minute; count the others and tell how many were left out."""

    def __init__(self, name: str = ""):
        super().__init__(name)
        self.lock = threading.Lock()
        self.last = float("-inf")
        self.left_out = 0

    def filter(self, record: logging.LogRecord) -> bool:
        with self.lock:
            now = clock()
            if now - self.last < QUIET_SECONDS:
                self.left_out += 1
                return False
            if self.left_out:
                record.msg = f"{record.msg} ({self.left_out} more like it in the last minute)"
            self.last, self.left_out = now, 0
            return True
