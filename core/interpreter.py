"""The interpreter's settings for a long-lived server process, applied once its start-up has loaded everything.

Measured choices (BENCHMARKS.md has the figures): they pay for a process that holds thousands of streams and serves
hundreds of actions a second, and would only slow a test run or a management command, so they are applied by the
server's start-up (tabsite/asgi.py), never at import.
"""

import gc
import sys

# The young generation is collected after 20,000 new objects (a request allocates a few thousand); the middle one every
# second young collection, so that the survivors of streams opened by the thousand are collected a few at a time rather
# than twenty generations at once (a long pause with 10,000 streams: BENCHMARKS.md); full collections stay rare.
GC_THRESHOLDS = (20_000, 2, 100)
# The database thread gives up the GIL in every SQLite call and must take it back from the busy event loop, which keeps
# it for up to this interval: 1 ms instead of the default 5 ms shortens the slowest updates (BENCHMARKS.md).
SWITCH_INTERVAL = 0.001


def tune_for_serving() -> None:
    """Keep what start-up loaded (it lives as long as the process) out of the collector's passes, and apply the
    thresholds and the GIL's switch interval above."""
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLDS)
    sys.setswitchinterval(SWITCH_INTERVAL)
