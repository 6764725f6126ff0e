"""The garbage collector's pauses in the server's processes, for `make bench` (bench/run.py puts this folder first on
the server's PYTHONPATH and names the log in BENCH_COLLECTOR_LOG; without it, nothing is installed).

One line a collection: the process, when it ended (epoch seconds), its generation (0 young, 1 middle, 2 full), and its
wall and CPU time in milliseconds. A collection holds the GIL throughout: every request of the process waits for it.

With BENCH_COLLECTOR_CENSUS=N as well, a census of what a collection is about to walk: when the young generation holds
at least N objects as a collection begins, their count by type goes to collector-census.log beside the log (the
process, when, the generation collected, how many objects, the twenty commonest types), at most once every
CENSUS_EVERY seconds a process. Counting a hundred thousand objects takes tens of milliseconds and holds the GIL too:
a run with a census is for finding what outlives the requests, not for its latency figures. Not timed as part of the
collection it precedes.
"""

import collections
import gc
import os
import time
from pathlib import Path

CENSUS_EVERY = 10.0


def _install(path: str) -> None:
    started = [0.0, 0.0]

    def record(phase: str, info: dict) -> None:
        if phase == "start":
            started[:] = time.perf_counter(), time.thread_time()
            return
        wall, cpu = time.perf_counter() - started[0], time.thread_time() - started[1]
        with open(path, "a") as log:
            log.write(f"{os.getpid()} {time.time():.3f} {info['generation']} {wall * 1000:.2f} {cpu * 1000:.2f}\n")

    gc.callbacks.append(record)


def _install_census(path: str, least: int) -> None:
    last = [-CENSUS_EVERY]

    def census(phase: str, info: dict) -> None:
        if phase != "start" or time.monotonic() - last[0] < CENSUS_EVERY:
            return
        young = gc.get_objects(generation=0)
        if len(young) < least:
            return
        last[0] = time.monotonic()
        counts = collections.Counter(type(item).__qualname__ for item in young)
        commonest = ", ".join(f"{name} {count}" for name, count in counts.most_common(20))
        with open(path, "a") as log:
            log.write(f"{os.getpid()} {time.time():.3f} {info['generation']} {len(young)}: {commonest}\n")

    gc.callbacks.insert(0, census)  # before `record`: the census is not counted in the collection's time


if os.environ.get("BENCH_COLLECTOR_LOG"):
    _install(os.environ["BENCH_COLLECTOR_LOG"])
    if os.environ.get("BENCH_COLLECTOR_CENSUS"):
        _install_census(
            str(Path(os.environ["BENCH_COLLECTOR_LOG"]).with_name("collector-census.log")),
            int(os.environ["BENCH_COLLECTOR_CENSUS"]),
        )
