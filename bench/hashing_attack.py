#!/usr/bin/env python3
"""Wrong passwords for many nicks from one address, open loop, and a newcomer registering from another address.

    python bench/hashing_attack.py --url http://127.0.0.1:8008 [--nicks 40] [--connections 8] [--rate 0.5]
                                   [--duration 60] [--newcomer-from 20]

`--nicks` accounts are registered first (from 127.0.0.3). Then `--connections` attackers on 127.0.0.1 each send
`register` with one of those nicks and a wrong password `--rate` times a second, on schedule whatever the answers (a
wrong password costs the server a full hash); from `--newcomer-from` seconds on, a newcomer on 127.0.0.2 registers a
new nick every 5 s. Reported: the attackers' answers by status, and the newcomer's waits. The server must take the
client's address from the socket (TRUSTED_PROXIES=0, the default). Prints JSON.
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

import aiohttp

sys.path.insert(0, str(Path(__file__).resolve().parent))
from load import summary  # noqa: E402  (the same percentiles as the other scenarios)

clock = time.monotonic


def session_from(address: str) -> aiohttp.ClientSession:
    connector = aiohttp.TCPConnector(local_addr=(address, 0), limit=0)
    return aiohttp.ClientSession(connector=connector, timeout=aiohttp.ClientTimeout(total=120))


async def register(session: aiohttp.ClientSession, url: str, nick: str, password: str) -> tuple[int, float]:
    started = clock()
    try:
        async with session.post(f"{url}/register", json={"nick": nick, "password": password}) as response:
            await response.read()
            return response.status, clock() - started
    except (aiohttp.ClientError, TimeoutError):
        return 0, clock() - started


async def main(args: argparse.Namespace) -> dict:
    run = secrets.token_hex(3)
    nicks = [f"v{run}{index}" for index in range(args.nicks)]
    async with session_from("127.0.0.3") as setup:
        started = clock()
        for nick in nicks:  # one at a time: the server's hashing queue is bounded, and this is no attack
            while (status := (await register(setup, args.url, nick, "the-right-one"))[0]) == 503:
                await asyncio.sleep(1)
            assert status == 200, status
        print(f"[attack] {len(nicks)} accounts in {clock() - started:.1f} s", file=sys.stderr)

    attack: list[tuple[int, float]] = []
    newcomer: list[tuple[int, float]] = []
    async with session_from("127.0.0.1") as attacker, session_from("127.0.0.2") as visitor:
        begin = clock()
        tasks = []

        async def attempt() -> None:
            attack.append(await register(attacker, args.url, random.choice(nicks), secrets.token_hex(6)))

        async def arrive(index: int) -> None:
            newcomer.append(await register(visitor, args.url, f"n{run}{index}", "a-new-password"))

        schedule = sorted(
            [
                (slot / args.rate + connection / (args.rate * args.connections), "attack")
                for connection in range(args.connections)
                for slot in range(int(args.duration * args.rate))
            ]
            + [
                (args.newcomer_from + 5 * index, "newcomer")
                for index in range(max(0, int((args.duration - args.newcomer_from) / 5)))
            ]
        )
        for index, (offset, kind) in enumerate(schedule):
            delay = begin + offset - clock()
            if delay > 0:
                await asyncio.sleep(delay)
            tasks.append(asyncio.create_task(attempt() if kind == "attack" else arrive(index)))
        await asyncio.gather(*tasks)
    statuses: dict[str, int] = {}
    for status, _ in attack:
        statuses[str(status)] = statuses.get(str(status), 0) + 1
    return {
        "attack": {"sent": len(attack), "by_status": statuses, "ms": summary([wait for _, wait in attack])},
        "newcomer": {
            "statuses": [status for status, _ in newcomer],
            "waits_s": [round(wait, 2) for _, wait in newcomer],
            "ms": summary([wait for _, wait in newcomer]),
        },
    }


def run() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--url", default="http://127.0.0.1:8008")
    parser.add_argument("--nicks", type=int, default=40)
    parser.add_argument("--connections", type=int, default=8)
    parser.add_argument("--rate", type=float, default=0.5, help="requests a second per attacking connection")
    parser.add_argument("--duration", type=float, default=60)
    parser.add_argument("--newcomer-from", type=float, default=20)
    args = parser.parse_args()
    print(json.dumps(asyncio.run(main(args)), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(run())
