#!/usr/bin/env python3
"""Turn deadlines at scale: what thousands of waiting deadlines cost, and how late they fire.

    python bench/deadlines.py [--games 10000] [--spread 60] [--kind draughts]

On a fresh SQLite database (under var/bench/, or DATABASE_URL's), it creates that many games in play, each with
its deadline an hour away, and measures one tick of the sweeper (games/sweeper.py) while nothing is due: its
time and its queries. Then it moves every deadline to a random moment of the next `--spread` seconds, runs the
sweeper thread exactly as a server process does, and reports how late after its deadline each game was ended,
and the sweeper's CPU. Prints a Markdown table. With `--kind draughts` the games are draughts rooms' games, each
with its players' clocks running (the deadline is when the clock on turn runs out).
"""

import argparse
import os
import random
import resource
import statistics
import sys
import tempfile
import threading
import time
from datetime import timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def setup(var_dir: str) -> None:
    os.environ["TAB_VAR_DIR"] = var_dir
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tabsite.settings")
    sys.path.insert(0, str(ROOT))
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0)


def thread_cpu() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_utime + resource.getrusage(resource.RUSAGE_SELF).ru_stime


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", type=int, default=10_000, help="games in play, each with a deadline")
    parser.add_argument("--spread", type=float, default=60.0, help="seconds over which the deadlines fall due")
    parser.add_argument("--kind", choices=("tab", "draughts"), default="tab", help="the game of the games in play")
    args = parser.parse_args()
    (ROOT / "var" / "bench").mkdir(parents=True, exist_ok=True)
    setup(tempfile.mkdtemp(prefix="deadlines-", dir=ROOT / "var" / "bench"))

    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.db import connection
    from django.db.models import F
    from django.test.utils import CaptureQueriesContext
    from django.utils import timezone

    from games import sweeper
    from games.models import Game, Seat
    from games.rules import find_engine
    from games.services import game_expire_due

    User = get_user_model()
    started = time.monotonic()
    players = User.objects.bulk_create(
        [User(username=f"deadline-{index}", password="!") for index in range(2 * args.games)], batch_size=2000
    )
    now = timezone.now()
    if args.kind == "draughts":
        match = {"kind": "draughts", "options": {}, "variant": "", "pool": "", "clock_ms": 600_000}
        match["clocks"] = [600_000, 600_000]
    else:
        match = {"kind": "tab", "options": {"size": 9}, "variant": "9", "pool": "1"}
    engine = find_engine(match["kind"])
    state = engine.state_to_json(engine.new(2, match["options"], random.Random(1)))
    games = Game.objects.bulk_create(
        [
            Game(**match, status=Game.Status.PLAYING, state=state, started_at=now, deadline=now + timedelta(hours=1))
            for index in range(args.games)
        ],
        batch_size=1000,
    )
    Seat.objects.bulk_create(
        [
            Seat(game=game, index=seat, user=players[2 * index + seat])
            for index, game in enumerate(games)
            for seat in (0, 1)
        ],
        batch_size=2000,
    )
    print(f"[deadlines] {args.games:,} games in play created in {time.monotonic() - started:.0f} s", file=sys.stderr)

    # 1. Nothing due: the cost of one tick.
    ticks = 500
    with CaptureQueriesContext(connection) as queries:
        game_expire_due()
    cpu, wall = time.process_time(), time.perf_counter()
    for _ in range(ticks):
        game_expire_due()
    tick_cpu = (time.process_time() - cpu) / ticks
    tick_wall = (time.perf_counter() - wall) / ticks
    per_second = 1 / settings.TAB_SWEEP_INTERVAL

    # 2. Every deadline falls due within the next `spread` seconds: how late is each game ended?
    # Written an hour ahead first (writing 10,000 deadlines one by one takes seconds: the first would be due before
    # the sweeper starts), then brought forward together in one statement, to begin a second from now.
    due_at = {}
    ahead = timezone.now() + timedelta(hours=1)
    for game_id in Game.objects.values_list("pk", flat=True):
        due_at[game_id] = ahead + timedelta(seconds=random.uniform(0, args.spread))
    games = list(Game.objects.only("pk", "deadline"))
    for game in games:
        game.deadline = due_at[game.pk]
    Game.objects.bulk_update(games, ["deadline"], batch_size=1000)
    forward = ahead - (timezone.now() + timedelta(seconds=1))
    Game.objects.update(deadline=F("deadline") - forward)
    due_at = {game_id: due - forward for game_id, due in due_at.items()}
    cpu_before = thread_cpu()
    stop = threading.Event()
    thread = threading.Thread(target=sweeper.sweep_forever, args=(stop,), daemon=True)
    thread.start()
    limit = time.monotonic() + args.spread + 60
    while Game.objects.exclude(status=Game.Status.FINISHED).exists() and time.monotonic() < limit:
        time.sleep(1)
    stop.set()
    thread.join()
    sweep_cpu = thread_cpu() - cpu_before
    late = [
        (finished_at - due_at[pk]).total_seconds()
        for pk, finished_at in Game.objects.filter(status=Game.Status.FINISHED).values_list("pk", "finished_at")
    ]
    ended = len(late)
    late.sort()

    def quantile(q: float) -> float:
        return late[min(len(late) - 1, int(q * len(late)))] if late else float("nan")

    what = "draughts rooms in play, clocks running" if args.kind == "draughts" else "games in play"
    print(f"### {'Clocks' if args.kind == 'draughts' else 'Turn deadlines'}: {args.games:,} {what}\n")
    print("| measure | value |")
    print("|---|---|")
    print(
        f"| sweeper tick with nothing due ({args.games:,} deadlines waiting) | {len(queries)} query, "
        f"{tick_wall * 1e6:.0f} µs ({tick_cpu * 1e6:.0f} µs CPU) |"
    )
    print(f"| cost of waiting, at {per_second:.0f} ticks a second | {tick_cpu * per_second * 100:.2f}% of one core |")
    print(
        f"| deadlines falling due over {args.spread:.0f} s | {ended:,} of {args.games:,} games ended "
        f"(the player on turn loses) |"
    )
    print(
        f"| ended after the deadline, p50 / p99 / max | {quantile(0.5):.2f} / {quantile(0.99):.2f} / "
        f"{late[-1] if late else float('nan'):.2f} s |"
    )
    print(f"| mean lateness | {statistics.fmean(late) if late else float('nan'):.2f} s |")
    print(
        f"| process CPU while they fell due | {sweep_cpu:.1f} s ({sweep_cpu / ended * 1000 if ended else 0:.2f} ms "
        f"per game ended) |"
    )
    return 0 if ended == args.games else 1


if __name__ == "__main__":
    sys.exit(main())
