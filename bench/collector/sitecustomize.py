"""The garbage collector's pauses in the server's processes, for `make bench` (bench/run.py puts this folder first on
the server's PYTHONPATH and names the log in BENCH_COLLECTOR_LOG; without it, nothing is installed).

One line a collection: the process, when it ended (epoch seconds), its generation (0 young, 1 middle, 2 full), and its
wall and CPU time in milliseconds. A collection holds the GIL throughout: every request of the process waits for it.
"""

import gc
import os
import time


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


if os.environ.get("BENCH_COLLECTOR_LOG"):
    _install(os.environ["BENCH_COLLECTOR_LOG"])
