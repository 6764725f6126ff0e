#!/usr/bin/env python3
"""Load on the Plakoto REST API: many tables in play, moves and status polls offered open loop.

    python bench/plakoto_load.py --url http://127.0.0.1:8008 [--tables 1000] [--moves 1000] [--polls 2000]
                                 [--duration 30] [--server-pid PID] [--json out.json]

Sets up `--tables` tables with both seats taken. Then, for `--duration` seconds, offers `--moves` moves a second
(each a `PUT board/piece/…` of the player on turn, one of the moves its board offers) and `--polls` `GET status/` a
second, on a fixed schedule whatever the answers (open loop); latency runs from a request's scheduled time to its
answer. A table whose turn ended reads its status and its board (with the new player's token) before its next move:
those reads are not timed, as a client's bookkeeping. A finished table is reset and seated again. With `--server-pid`,
the CPU of the server's process and its descendants over the run. Prints JSON.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import secrets
import sys
import time
from pathlib import Path

import orjson

try:  # pragma: no cover - optional
    import uvloop
except ImportError:  # pragma: no cover
    uvloop = None

sys.path.insert(0, str(Path(__file__).resolve().parent))
from load import TreeProbe, collector_paused, raise_file_limit, summary  # noqa: E402  (bench/load.py: the same figures as the other scenarios)
from rawhttp import Client  # noqa: E402  (a client cheap enough for 4,000 requests a second)

clock = time.monotonic


class Table:
    def __init__(self, name: str):
        self.name = name
        self.tokens: dict[str, str] = {}
        self.moves: list[tuple[int, int, int]] = []  # (x, y, destination) of the player on turn
        self.turn: str | None = None
        self.busy = False


async def seat(client: Client, table: Table) -> None:
    status, body = await client.request("POST", f"/plakoto/{table.name}/board/")
    assert status == 200, body
    for colour in ("W", "B"):
        body = orjson.dumps({"username": colour})
        _, answer = await client.request("PUT", f"/plakoto/{table.name}/players/{colour}", body)
        table.tokens[colour] = orjson.loads(answer)[0]["token"]
    await learn(client, table)


async def learn(client: Client, table: Table) -> None:
    """Read who is on turn and what they may do (a client's bookkeeping, not timed)."""
    _, body = await client.request("GET", f"/plakoto/{table.name}/status/")
    status = orjson.loads(body)[0]
    table.turn = status["p_turn"] if status["status"] == "started" else None
    table.moves = []
    if table.turn is None:
        return
    headers = {"X-Token": table.tokens[table.turn]}
    _, body = await client.request("GET", f"/plakoto/{table.name}/board/", headers=headers)
    table.moves = moves_of(orjson.loads(body))


def moves_of(cells: list[dict]) -> list[tuple[int, int, int]]:
    return [(cell["x"], cell["y"], move["x"]) for cell in cells if "moves" in cell for move in cell["moves"]]


async def main(args: argparse.Namespace) -> dict:
    rng = random.Random(args.seed)
    # No cap on connections: a capped pool queues requests in the generator itself, which would count as the server's
    # latency.
    raise_file_limit()
    client = Client(args.url)
    results: dict = {"tables": args.tables, "moves_per_s": args.moves, "polls_per_s": args.polls}
    try:
        # Names of this run's own: a table of an earlier run may still be in play (only its players may reset it).
        run = secrets.token_hex(3)
        tables = [Table(f"bench-{run}-{index}") for index in range(args.tables)]
        started = clock()
        semaphore = asyncio.Semaphore(64)

        async def setup(table: Table) -> None:
            async with semaphore:
                await seat(client, table)

        await asyncio.gather(*(setup(table) for table in tables))
        results["setup_s"] = clock() - started
        print(f"[plakoto] {len(tables)} tables seated in {results['setup_s']:.1f} s", file=sys.stderr)

        move_latency: list[float] = []
        poll_latency: list[float] = []
        errors: list[str] = []
        skipped = 0
        tasks: set[asyncio.Task] = set()

        async def move(table: Table, scheduled: float) -> None:
            try:
                x, y, destination = rng.choice(table.moves)
                headers = {"X-Token": table.tokens[table.turn]}
                path = f"/plakoto/{table.name}/board/piece/{x}/{y}/"
                status, body = await client.request("PUT", path, b'{"x": %d}' % destination, headers)
                move_latency.append(clock() - scheduled)
                if status != 200:
                    errors.append(body.decode(errors="replace")[:200])
                    await learn(client, table)
                    return
                table.moves = moves_of(orjson.loads(body))
                if not table.moves:
                    await learn(client, table)
                    if table.turn is None:
                        await seat(client, table)
            except Exception as error:  # noqa: BLE001 - every failure is counted
                errors.append(repr(error))
            finally:
                table.busy = False

        async def poll(table: Table, scheduled: float) -> None:
            try:
                status, _ = await client.request("GET", f"/plakoto/{table.name}/status/")
                poll_latency.append(clock() - scheduled)
                if status != 200:
                    errors.append(f"status {status}")
            except Exception as error:  # noqa: BLE001
                errors.append(repr(error))

        schedule = sorted(
            [(index / args.moves, "move") for index in range(int(args.moves * args.duration))]
            + [(index / args.polls, "poll") for index in range(int(args.polls * args.duration))]
        )
        # The generator's own collector stays still while it measures (its pauses would count as the server's).
        with collector_paused():
            probe = TreeProbe([args.server_pid] if args.server_pid else [])
            probe.sample()
            cpu_before = probe.cpu_seconds()
            own_cpu_before = time.process_time()
            begin = clock()
            behind = 0.0
            for offset, kind in schedule:
                scheduled = begin + offset
                delay = scheduled - clock()
                if delay > 0:
                    await asyncio.sleep(delay)
                else:
                    behind = max(behind, -delay)
                table = tables[rng.randrange(len(tables))]
                if kind == "poll":
                    task = asyncio.create_task(poll(table, scheduled))
                else:
                    if table.busy or not table.moves:
                        table = next((t for t in tables[rng.randrange(len(tables)) :] if not t.busy and t.moves), None)
                        if table is None:
                            skipped += 1
                            continue
                    table.busy = True
                    task = asyncio.create_task(move(table, scheduled))
                tasks.add(task)
                task.add_done_callback(tasks.discard)
            await asyncio.gather(*tasks)
        elapsed = clock() - begin
        probe.sample()
        results.update(
            {
                "server_cpu_percent": 100 * (probe.cpu_seconds() - cpu_before) / elapsed if args.server_pid else None,
                "generator_cpu_percent": 100 * (time.process_time() - own_cpu_before) / elapsed,
                "generator_behind_ms": 1000 * behind,
                "moves_answered": len(move_latency),
                "polls_answered": len(poll_latency),
                "moves_skipped": skipped,
                "moves_achieved_per_s": len(move_latency) / elapsed,
                "polls_achieved_per_s": len(poll_latency) / elapsed,
                "errors": len(errors),
                "error_samples": errors[:5],
                "move_ms": summary(move_latency),
                "poll_ms": summary(poll_latency),
                "connections_opened": client.opened,
            }
        )
    finally:
        client.close()
    return results


def run() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--url", default="http://127.0.0.1:8008")
    parser.add_argument("--tables", type=int, default=1000)
    parser.add_argument("--moves", type=float, default=1000)
    parser.add_argument("--polls", type=float, default=2000)
    parser.add_argument("--duration", type=float, default=30)
    parser.add_argument("--seed", type=int)
    parser.add_argument("--server-pid", type=int, help="the server's process, to measure its CPU")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    if uvloop is not None:
        results = asyncio.run(main(args), loop_factory=uvloop.new_event_loop)
    else:
        results = asyncio.run(main(args))
    text = json.dumps(results, indent=2)
    if args.json:
        args.json.write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(run())
