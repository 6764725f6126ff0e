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

With BENCH_BATCHES_LOG as well, the batches of database calls (core/dbthread.py, the database thread's or the event
loop's): one line a second a process that ran some, with how many batches and calls, the CPU of the thread that ran
them inside the batches (`time.thread_time`) and, of it, inside the calls themselves; the rest is what a batch costs
whatever its calls (its transaction's begin and commit, its trips to Redis, the commit's hooks). Patched into the
module once it is imported, so that the server's own code carries nothing of it.
"""

import collections
import gc
import importlib.abc
import importlib.util
import os
import sys
import threading
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


def _install_batches(path: str) -> None:
    """Count the batches of database calls (see the module's docstring) once core.dbthread is imported."""
    totals = [0, 0, 0.0, 0.0]  # batches, calls, CPU in the batches, CPU in their calls (s), since the last line
    written = [time.time()]
    inside = threading.local()

    def patch(module) -> None:
        run_around, run = module._Batches.run_around, module.Call.run

        def timed_run(call) -> None:
            began = time.thread_time()
            try:
                run(call)
            finally:
                inside.cpu = getattr(inside, "cpu", 0.0) + time.thread_time() - began

        def timed_run_around(self, batch) -> None:
            inside.cpu = 0.0
            began = time.thread_time()
            run_around(self, batch)
            totals[0] += 1
            totals[1] += len(batch)
            totals[2] += time.thread_time() - began
            totals[3] += inside.cpu
            now = time.time()
            if now - written[0] >= 1.0:
                batches, calls, cpu, calls_cpu = totals
                line = f"{os.getpid()} {now:.3f} {batches} {calls} {cpu * 1000:.3f} {calls_cpu * 1000:.3f}\n"
                totals[:] = [0, 0, 0.0, 0.0]
                written[0] = now
                with open(path, "a") as log:
                    log.write(line)

        module.Call.run = timed_run
        module._Batches.run_around = timed_run_around

    sys.meta_path.insert(0, _AfterImport("core.dbthread", patch))


class _AfterImport(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Run `then(module)` once the module of this name has been imported (its own finder and loader do the import)."""

    def __init__(self, name: str, then) -> None:
        self.name, self.then, self.loader = name, then, None

    def find_spec(self, fullname, path, target=None):
        if fullname != self.name or self.loader is not None:
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(fullname)
        if spec is None or spec.loader is None:
            return spec
        self.loader, spec.loader = spec.loader, self
        return spec

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def exec_module(self, module) -> None:
        module.__spec__.loader = module.__loader__ = self.loader
        self.loader.exec_module(module)
        self.then(module)


if os.environ.get("BENCH_BATCHES_LOG"):
    _install_batches(os.environ["BENCH_BATCHES_LOG"])

if os.environ.get("BENCH_COLLECTOR_LOG"):
    _install(os.environ["BENCH_COLLECTOR_LOG"])
    if os.environ.get("BENCH_COLLECTOR_CENSUS"):
        _install_census(
            str(Path(os.environ["BENCH_COLLECTOR_LOG"]).with_name("collector-census.log")),
            int(os.environ["BENCH_COLLECTOR_CENSUS"]),
        )
