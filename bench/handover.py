#!/usr/bin/env python3
"""What the hand-over of a call to the database thread costs (core/dbthread.py), without a database or a network.

    python bench/handover.py [--rate 1000] [--seconds 8] [--gather-ms 10] [--runs 2]

An event loop hands the database thread `--rate` calls a second, two at each turn, as requests come; each call is a
few microseconds of Python and touches no database, and every batch runs with nothing around it. What is left is the
thread's own machinery: the queue, the gathering window, the GIL passed between the two threads, the answers handed
back to the loop. Printed per run: the process's CPU a call and its context switches (voluntary: a thread went to
sleep; involuntary: the kernel took a core from it).
"""

import argparse
import asyncio
import os
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tabsite.settings")

import django  # noqa: E402

django.setup()

from core import dbthread  # noqa: E402

PER_TURN = 2


def work() -> int:
    return sum(range(300))


async def drive(rate: float, seconds: float, gather: float) -> str:
    thread = dbthread.DatabaseThread(gather=gather)
    thread.thread.start()
    loop = asyncio.get_running_loop()
    futures = []
    began = loop.time()
    cpu = time.process_time()
    usage = resource.getrusage(resource.RUSAGE_SELF)
    while loop.time() - began < seconds:
        futures += [thread.submit(work, (), {}) for _ in range(PER_TURN)]
        await asyncio.sleep(PER_TURN / rate)
    await asyncio.gather(*futures)
    cpu = time.process_time() - cpu
    after = resource.getrusage(resource.RUSAGE_SELF)
    thread.stop()
    calls = len(futures)
    return (
        f"{calls} calls: CPU {cpu / calls * 1e6:.1f} µs a call; context switches, voluntary "
        f"{after.ru_nvcsw - usage.ru_nvcsw}, involuntary {after.ru_nivcsw - usage.ru_nivcsw}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rate", type=float, default=1000.0, help="calls a second")
    parser.add_argument("--seconds", type=float, default=8.0)
    parser.add_argument("--gather-ms", type=float, default=10.0, help="the thread's gathering window")
    parser.add_argument("--runs", type=int, default=2)
    args = parser.parse_args()
    # Every batch with nothing around it: no publication, no credentials read ahead.
    dbthread._around_batches.clear()
    dbthread._inside_batches.clear()
    for _ in range(args.runs):
        print(asyncio.run(drive(args.rate, args.seconds, args.gather_ms / 1000)))


if __name__ == "__main__":
    main()
