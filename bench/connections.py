#!/usr/bin/env python3
"""Slow and greedy clients against a running server: how long slowloris connections are held, and what happens when
one address opens connections until the server can take no more.

    python bench/connections.py --url http://127.0.0.1:8008 [--slow 500] [--slow-seconds 60] [--flood 19900]
                                [--flood-procs 2] [--hold 8]

1. Slowloris: `--slow` connections each send a request's header one byte every 4 s; reported: how many the server
   still holds after 5, 15, 30 and `--slow-seconds` seconds, and what it answered those it closed.
2. Flood: `--flood` connections opened as fast as possible (spread over `--flood-procs` processes: each process has
   its own open-files limit) and held silent; then a real request (GET /healthz) on a new connection. Reported: how
   many connections the server accepted and held, how many it answered at once with a status (503 at its cap) or
   closed, and what the real request got and how fast. Connections are held `--hold` seconds at most, less than a
   header deadline of 10 s, so that the figure is the cap's, not the deadline's.

Prints JSON. Only loopback URLs.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import subprocess
import sys
import time
from urllib.parse import urlsplit

clock = time.monotonic


def raise_file_limit() -> int:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return hard


async def first_answer(reader: asyncio.StreamReader, timeout: float) -> str:
    """What the server did with a connection within `timeout`: its status line's code, 'closed', or 'held'."""
    try:
        line = await asyncio.wait_for(reader.readline(), timeout)
    except TimeoutError:
        return "held"
    except (ConnectionError, OSError):
        return "closed"
    if not line:
        return "closed"
    parts = line.split()
    return parts[1].decode() if len(parts) > 1 else "closed"


async def slowloris(host: str, port: int, count: int, seconds: float) -> dict:
    header = f"GET /healthz HTTP/1.1\r\nHost: {host}\r\nX-Slow: {'a' * 200}\r\n\r\n".encode()
    ended: dict[int, tuple[float, str]] = {}
    started = clock()

    async def one(index: int) -> None:
        try:
            reader, writer = await asyncio.open_connection(host, port)
        except OSError:
            ended[index] = (0.0, "refused")
            return
        position = 0
        while clock() - started < seconds and position < len(header):
            writer.write(header[position : position + 1])
            position += 1
            try:
                await writer.drain()
            except (ConnectionError, OSError):
                ended[index] = (clock() - started, "closed")
                return
            answer = await first_answer(reader, 4.0)
            if answer != "held":
                ended[index] = (clock() - started, answer)
                writer.close()
                return
        writer.close()

    await asyncio.gather(*(one(index) for index in range(count)))
    held_at = {
        f"held_after_{mark:g}s": sum(1 for index in range(count) if index not in ended or ended[index][0] > mark)
        for mark in sorted({5.0, 15.0, 30.0, seconds})
        if mark <= seconds
    }
    answers: dict[str, int] = {}
    for _, answer in ended.values():
        answers[answer] = answers.get(answer, 0) + 1
    return {"connections": count, **held_at, "how_they_ended": answers}


async def flood_worker(host: str, port: int, count: int, hold: float) -> dict:
    """Open `count` silent connections, say so on stdout, hold them `hold` s; report what the server did."""
    connections = []
    failed = 0

    async def one() -> None:
        nonlocal failed
        try:
            connections.append(await asyncio.open_connection(host, port))
        except OSError:
            failed += 1

    batch = 500
    for start in range(0, count, batch):
        await asyncio.gather(*(one() for _ in range(min(batch, count - start))))
    print(json.dumps({"opened": len(connections), "failed": failed}), flush=True)
    results = await asyncio.gather(*(first_answer(reader, hold) for reader, _ in connections))
    outcome: dict[str, int] = {}
    for result in results:
        outcome[result] = outcome.get(result, 0) + 1
    for _, writer in connections:
        writer.close()
    return {"opened": len(connections), "connect_failed": failed, "outcome": outcome}


async def probe(host: str, port: int) -> dict:
    started = clock()
    try:
        reader, writer = await asyncio.wait_for(asyncio.open_connection(host, port), 10)
        writer.write(f"GET /healthz HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n".encode())
        await writer.drain()
        data = await asyncio.wait_for(reader.read(), 10)
        writer.close()
    except (OSError, TimeoutError) as error:
        return {"answer": f"failed: {error!r}", "ms": round((clock() - started) * 1000, 1)}
    status = data.split(b"\r\n", 1)[0].decode(errors="replace") if data else "closed unanswered"
    retry = next((line for line in data.split(b"\r\n") if line.lower().startswith(b"retry-after")), b"")
    return {"answer": status, "retry_after": retry.decode(), "ms": round((clock() - started) * 1000, 1)}


def flood(url: str, host: str, port: int, count: int, procs: int, hold: float) -> dict:
    workers = [
        subprocess.Popen(
            [sys.executable, __file__, "--url", url, "--worker", str(count // procs), "--hold", str(hold)],
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(procs)
    ]
    started = clock()
    opened = [json.loads(worker.stdout.readline()) for worker in workers]
    open_seconds = clock() - started
    real = asyncio.run(probe(host, port))
    reports = [json.loads(worker.stdout.readline()) for worker in workers]
    for worker in workers:
        worker.wait()
    outcome: dict[str, int] = {}
    for report in reports:
        for key, value in report["outcome"].items():
            outcome[key] = outcome.get(key, 0) + value
    return {
        "offered": count,
        "opened": sum(item["opened"] for item in opened),
        "connect_failed": sum(item["failed"] for item in opened),
        "seconds_to_open": round(open_seconds, 1),
        "what_the_server_did_within_the_hold": outcome,
        "a_real_request_then": real,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--url", default="http://127.0.0.1:8008")
    parser.add_argument("--slow", type=int, default=500)
    parser.add_argument("--slow-seconds", type=float, default=60)
    parser.add_argument("--flood", type=int, default=19_900)
    parser.add_argument("--flood-procs", type=int, default=2)
    parser.add_argument("--hold", type=float, default=8)
    parser.add_argument("--worker", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    parts = urlsplit(args.url)
    host, port = parts.hostname or "127.0.0.1", parts.port or 80
    if host not in ("127.0.0.1", "localhost", "::1"):
        parser.error("only loopback URLs")
    raise_file_limit()
    if args.worker:
        print(json.dumps(asyncio.run(flood_worker(host, port, args.worker, args.hold))), flush=True)
        return 0
    results = {}
    if args.slow:
        results["slowloris"] = asyncio.run(slowloris(host, port, args.slow, args.slow_seconds))
    if args.flood:
        results["flood"] = flood(args.url, host, port, args.flood, args.flood_procs, args.hold)
    print(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
