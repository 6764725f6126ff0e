"""The interpreter's settings for a long-lived server process, applied once its start-up has loaded everything.

Measured choices (BENCHMARKS.md has the figures): they pay for a process that holds thousands of streams and serves
hundreds of actions a second, and would only slow a test run or a management command, so they are applied by the
server's start-up (tabsite/asgi.py), never at import.
"""

import ctypes
import gc
import os
import platform
import sys

# The young generation is collected once 10,000 more objects were made than ended (a request allocates a few thousand:
# fewer would collect the requests in flight over and over). CPython counts them so: an old object's end takes one off
# the count too, so where each action's new objects replace older ones the young generation can hold far more than
# 10,000 when its collection comes (with 5,000 games, 164,598 after 34 s: BENCHMARKS.md, 2026-12-06, with the policies
# tried against it). A collection holds the GIL, and its pause grows with the objects that outlive it: a held game
# replaced at each action, a stream's wait renewed at each event; with 10,000 streams a young collection of 20,000 took
# 30 ms and the middle one, three young generations at once, up to 140 ms. So the middle generation is collected at
# every second young collection (threshold 0: as soon as a young one has left it anything), two young generations at
# once; and a full collection, which goes through every object the process holds, comes after 300 middle collections (6
# million new objects, as many as before), and only once what the middle ones moved to the oldest generation is a
# quarter of what it holds (CPython's rule).
GC_THRESHOLDS = (10_000, 0, 300)
# The database thread gives up the GIL in every SQLite call and must take it back from the busy event loop, which keeps
# it for up to this interval: 1 ms instead of the default 5 ms shortens the slowest updates (BENCHMARKS.md).
SWITCH_INTERVAL = 0.001
# glibc's allocator gives a block of at least this many bytes a mapping of its own, returned whole when it is freed.
# Its default moves: once such a block is freed, the threshold rises to that block's size, and the next large blocks
# (a TLS connection's read buffer is 256 KiB, mostly never written) come from the heap, whose pages, once used, count
# for every connection. Fixed at glibc's own starting value, a draughts connection takes half the memory
# (BENCHMARKS.md). The environment's MALLOC_MMAP_THRESHOLD_, if set, wins.
MMAP_THRESHOLD = 128 * 1024
_M_MMAP_THRESHOLD = -3  # mallopt's parameter (malloc.h)


def tune_for_serving() -> None:
    """Keep what start-up loaded (it lives as long as the process) out of the collector's passes, and apply the
    thresholds, the GIL's switch interval and the allocator's threshold above."""
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLDS)
    sys.setswitchinterval(SWITCH_INTERVAL)
    fix_mmap_threshold()


def fix_mmap_threshold() -> bool:
    """Fix glibc's threshold for a block's own mapping at MMAP_THRESHOLD; return whether it is fixed (not on another C
    library, nor where the environment sets it already)."""
    if platform.libc_ver()[0] != "glibc" or "MALLOC_MMAP_THRESHOLD_" in os.environ:
        return False
    return ctypes.CDLL(None).mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD) == 1
