#!/usr/bin/env python3
"""`make bench-analysis`: what the analysis of a finished game costs, and what it takes from the players.

    python bench/analysis.py [--games N] [--kinds tab,draughts,…] [--positions P] [--seconds S]

1. For each game, N games played by the computer (the first seat greedy, the others at random), each analysed with
   the server's budget (ANALYSIS_POSITIONS, ANALYSIS_SECONDS unless given): seconds of CPU per game, positions
   looked at, how deep the turns were searched.
2. Responsiveness on this machine: as many busy processes as it has cores, at the server's priority (a server at
   saturation), count how much work they get done in a while, alone, then with the analysing process beside them
   at its priority (nice 10), analysing flat out. The share they keep is what players keep of the server.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tabsite.settings")

import django  # noqa: E402

django.setup()

from django.conf import settings  # noqa: E402

from games import bots  # noqa: E402
from games.bots.analysis import review  # noqa: E402
from games.rules import ENGINES, find_engine  # noqa: E402

SEATS = {"fish": 3}


def played(kind: str, seed: int) -> tuple[dict, list[int], list[dict]]:
    """Return the options, the seats and the log of a game played by the computer."""
    engine = find_engine(kind)
    seats, options = SEATS.get(kind, 2), engine.options({})
    rng = random.Random(seed)
    # The start a replay makes (games/history.py), dealt by the options alone.
    state = engine.new(seats, options, random.Random(0))
    log = [{"seq": 1, "kind": "start", "player": None, "data": {}}]
    while (seat := engine.to_act(state)) is not None:
        action = bots.choose(engine, state, seat, bots.GREEDY if seat == 0 else bots.RANDOM, rng)
        done = engine.apply(state, seat, action, rng)
        log.append({"seq": len(log) + 1, "kind": done.kind, "player": 100 + seat, "data": dict(done.data)})
    return options, [100 + seat for seat in range(seats)], log


def cost(kinds: list[str], games: int, positions: int, seconds: float) -> None:
    print(f"Analysis of a game: budget {positions:,} positions and {seconds:g} s, {games} games each")
    print("game       entries  CPU s mean  CPU s max  positions mean  deepest turns")
    for kind in kinds:
        spent, looked, deepest, entries = [], [], [], []
        for game in range(games):
            options, seats, log = played(kind, seed=game)
            started = time.process_time()
            result = review(kind, options, seats, log, positions=positions, seconds=seconds, seed=game)
            spent.append(time.process_time() - started)
            looked.append(result.positions)
            deepest.append(max(result.depths, default=0))
            entries.append(len(log))
        print(
            f"{kind:10} {statistics.mean(entries):7.0f}  {statistics.mean(spent):10.1f}  {max(spent):9.1f}  "
            f"{statistics.mean(looked):14,.0f}  {max(deepest)}"
        )


def _busy(stop: multiprocessing.Event, done: multiprocessing.Value) -> None:  # type: ignore[valid-type]
    """Work as a server at saturation does, counting units of work (a Tâb game's worth of rules each)."""
    engine, rng = find_engine("tab"), random.Random(os.getpid())
    while not stop.is_set():
        state = engine.new(2, {"size": 9}, rng)
        for _ in range(200):
            seat = engine.to_act(state)
            if seat is None:
                break
            engine.apply(state, seat, rng.choice(engine.legal_actions(state, seat)), rng)
        with done.get_lock():
            done.value += 1


def _analysing(stop: multiprocessing.Event) -> None:  # type: ignore[valid-type]
    os.nice(10)  # as the server starts it (tabsite/gunicorn.conf.py)
    seed = 0
    while not stop.is_set():
        options, seats, log = played("plakoto", seed)
        review("plakoto", options, seats, log, positions=settings.ANALYSIS_POSITIONS, seconds=2)
        seed += 1


def responsiveness(duration: float) -> None:
    cores = os.cpu_count() or 1
    rates = []
    for with_analysis in (False, True):
        stop, done = multiprocessing.Event(), multiprocessing.Value("i", 0)
        workers = [multiprocessing.Process(target=_busy, args=(stop, done)) for _ in range(cores)]
        if with_analysis:
            workers.append(multiprocessing.Process(target=_analysing, args=(stop,)))
        for worker in workers:
            worker.start()
        time.sleep(2)  # all started and busy
        before = done.value
        time.sleep(duration)
        rates.append((done.value - before) / duration)
        stop.set()
        for worker in workers:
            worker.join()
    print(
        f"\nResponsiveness: {cores} busy processes at normal priority did {rates[0]:.0f} units of work/s alone, "
        f"{rates[1]:.0f}/s beside the analysing process (nice 10, busy): they kept {rates[1] / rates[0]:.0%}."
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=5, help="games analysed per kind (default 5)")
    parser.add_argument("--kinds", default=",".join(sorted(ENGINES)), help="games to measure, by kind")
    parser.add_argument("--positions", type=int, default=settings.ANALYSIS_POSITIONS)
    parser.add_argument("--seconds", type=float, default=settings.ANALYSIS_SECONDS)
    parser.add_argument("--duration", type=float, default=20.0, help="seconds of each responsiveness phase")
    args = parser.parse_args()
    cost(args.kinds.split(","), args.games, args.positions, args.seconds)
    responsiveness(args.duration)


if __name__ == "__main__":
    main()
