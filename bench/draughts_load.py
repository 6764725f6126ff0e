#!/usr/bin/env python3
"""Load on the draughts room server: many rooms at once over TLS, commands offered open loop, latency and memory.

    python bench/draughts_load.py --port 8009 [--rooms 1000] [--rate 2000] [--duration 30] [--server-pid PID]
        [--get-state-share 0.5]

Sets up `--rooms` rooms, each with its two players' TLS connections held (CREATE, then JOIN), and measures the
server's memory before and after (with `--server-pid`, the resident memory of the server's process and its descendants).
Then it offers commands at `--rate` per second, on a fixed schedule whatever the answers (open loop): half MOVE (a
random legal move of the side to move, as its own connection) and half GET_STATE (either player), or GET_STATE's
`--get-state-share` of them (clients that poll their room while they wait). A room whose game is over is made again by
its players: LEAVE, LEAVE, CREATE, JOIN, commands like the others. Latency runs from a command's scheduled time to its
answer, so a server that falls behind shows it. Prints JSON figures.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import ssl
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from load import TreeProbe, collector_paused, summary  # noqa: E402  (bench/load.py: the same figures as the other scenarios)

from games.rules.draughts import State  # noqa: E402  (pure: no Django)

try:  # pragma: no cover - optional
    import uvloop
except ImportError:  # pragma: no cover
    uvloop = None

clock = time.monotonic


def log(text: str) -> None:
    print(f"[draughts] {text}", file=sys.stderr, flush=True)


def server_rss(pid: int) -> int:
    """Return the resident memory in bytes of the server: its process and all its descendants."""
    probe = TreeProbe([pid])
    probe.sample()
    return probe.rss


class Connection:
    """One player's TLS connection: one command at a time, answered in order."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter):
        self.reader, self.writer = reader, writer

    @classmethod
    async def open(cls, host: str, port: int, context: ssl.SSLContext) -> Connection:
        reader, writer = await asyncio.open_connection(host, port, ssl=context, server_hostname="localhost")
        return cls(reader, writer)

    async def say(self, line: str) -> str:
        self.writer.write(line.encode() + b"\n")
        return (await self.reader.readline()).decode().rstrip("\n")


class Room:
    def __init__(self, creator: Connection, joiner: Connection):
        self.creator, self.joiner = creator, joiner
        self.white: Connection = creator
        self.black: Connection = joiner
        self.state = State()
        self.busy = False
        self.made = 0

    async def make(self) -> list[tuple[str, str]]:
        """CREATE and JOIN; return the (command, answer) pairs."""
        created = await self.creator.say("CREATE")
        variables = dict(part.split("=", 1) for part in created.split(" ")[1:])
        probe = await self.creator.say("GET_STATE")
        creator_white = "WHITE_ONLINE=TRUE" in probe
        joined = await self.joiner.say(f"JOIN {variables['ROOM_ID']} {variables['ENEMY_COLOR_ID']}")
        self.white, self.black = (self.creator, self.joiner) if creator_white else (self.joiner, self.creator)
        self.state = State()
        self.made += 1
        return [("CREATE", created), ("GET_STATE", probe), ("JOIN", joined)]


async def main(args: argparse.Namespace) -> dict:
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    rng = random.Random(args.seed)
    results: dict = {
        "rooms": args.rooms,
        "rate": args.rate,
        "duration": args.duration,
        "get_state_share": args.get_state_share,
    }
    memory_before = server_rss(args.server_pid) if args.server_pid else None

    started = clock()
    semaphore = asyncio.Semaphore(args.concurrency)

    async def make_room() -> Room:
        async with semaphore:
            room = Room(*[await Connection.open(args.host, args.port, context) for _ in range(2)])
            for command, answer in await room.make():
                if not answer.startswith(("ROOM_CREATED", "STATUS_OK", "ROOM_JOINED")):
                    raise RuntimeError(f"{command}: {answer}")
            return room

    rooms = await asyncio.gather(*(make_room() for _ in range(args.rooms)))
    results["setup_s"] = clock() - started
    log(f"{len(rooms)} rooms, {2 * len(rooms)} TLS connections held, in {results['setup_s']:.1f} s")
    await asyncio.sleep(2)
    if args.server_pid:
        memory_after = server_rss(args.server_pid)
        results["memory_before_mib"] = memory_before / 2**20
        results["memory_after_mib"] = memory_after / 2**20
        results["memory_per_connection_kib"] = (memory_after - memory_before) / (2 * len(rooms)) / 1024

    latencies: dict[str, list[float]] = {"MOVE": [], "GET_STATE": [], "remake": []}
    errors: list[str] = []
    skipped = 0
    in_flight: set[asyncio.Task] = set()

    async def command(room: Room, scheduled: float) -> None:
        try:
            if room.state.winner() is not None:
                # Over: both players leave, and make the room again.
                for player in (room.creator, room.joiner):
                    if await player.say("LEAVE") != "ROOM_LEFT":
                        errors.append("LEAVE")
                for name, answer in await room.make():
                    if answer.split(" ")[0] not in ("ROOM_CREATED", "STATUS_OK", "ROOM_JOINED"):
                        errors.append(f"{name}: {answer}")
                latencies["remake"].append(clock() - scheduled)
            elif rng.random() >= args.get_state_share:
                move = rng.choice(room.state.legal_moves())
                player = room.white if room.state.turn == "w" else room.black
                answer = await player.say(f"MOVE {move}")
                latencies["MOVE"].append(clock() - scheduled)
                if answer != "MOVE_OK":
                    errors.append(answer)
                room.state.apply(move)
            else:
                answer = await rng.choice((room.white, room.black)).say("GET_STATE")
                latencies["GET_STATE"].append(clock() - scheduled)
                if not answer.startswith("STATUS_OK "):
                    errors.append(answer)
        except Exception as error:  # noqa: BLE001 - every failure is counted
            errors.append(repr(error))
        finally:
            room.busy = False

    # The generator's own collector stays still while it measures (its pauses would count as the server's).
    with collector_paused():
        probe = TreeProbe([args.server_pid] if args.server_pid else [])
        probe.sample()
        cpu_before, own_cpu_before = probe.cpu_seconds(), time.process_time()
        loop_started = clock()
        count = int(args.rate * args.duration)
        for index in range(count):
            scheduled = loop_started + index / args.rate
            delay = scheduled - clock()
            if delay > 0:
                await asyncio.sleep(delay)
            room = rooms[rng.randrange(len(rooms))]
            if room.busy:
                # Its previous command is still out: a player waits for its answer before the next (the schedule
                # still counts from now on for another room).
                room = next((other for other in rooms[rng.randrange(len(rooms)) :] if not other.busy), None)
                if room is None:
                    skipped += 1
                    continue
            room.busy = True
            task = asyncio.create_task(command(room, scheduled))
            in_flight.add(task)
            task.add_done_callback(in_flight.discard)
        await asyncio.gather(*in_flight)
    elapsed = clock() - loop_started
    probe.sample()
    answered = sum(len(values) for values in latencies.values())
    results.update(
        {
            "offered": count,
            "answered": answered,
            "skipped": skipped,
            "achieved_per_s": answered / elapsed,
            "server_cpu_percent": 100 * (probe.cpu_seconds() - cpu_before) / elapsed if args.server_pid else None,
            "generator_cpu_percent": 100 * (time.process_time() - own_cpu_before) / elapsed,
            "errors": len(errors),
            "error_samples": errors[:5],
            "latency_ms": {name: summary(values) for name, values in latencies.items()},
            "all_ms": summary([value for values in latencies.values() for value in values]),
            "rooms_made_again": sum(room.made - 1 for room in rooms),
        }
    )
    for room in rooms:
        for player in (room.creator, room.joiner):
            player.writer.close()
    return results


def run() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8009)
    parser.add_argument("--rooms", type=int, default=1000)
    parser.add_argument("--rate", type=float, default=2000, help="commands offered per second")
    parser.add_argument("--duration", type=float, default=30.0)
    parser.add_argument(
        "--get-state-share", type=float, default=0.5, help="the share of GET_STATE among the commands (the rest MOVE)"
    )
    parser.add_argument("--concurrency", type=int, default=64, help="rooms being made at once during setup")
    parser.add_argument("--server-pid", type=int, help="the server's process, to measure its memory")
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    runner = asyncio.run(main(args), loop_factory=uvloop.new_event_loop) if uvloop else asyncio.run(main(args))
    text = json.dumps(runner, indent=2)
    if args.json:
        args.json.write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(run())
