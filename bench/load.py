#!/usr/bin/env python3
"""Load generator for any server of the course's Tâb API (HTTP + Server-Sent Events).

    python bench/load.py --url http://127.0.0.1:8008 [--url http://127.0.0.1:8009 ...] --games G --rate R \
        --duration S [--size 9] [--server-pid PID ...] [--ranking-rate Q] [--register-storm N] [--json out.json]

--rate R1,R2,… runs one phase per rate on the same games (games given up in a phase come back in the next one).

Game scenario (--games G):
  1. registers 2G new players (nicks unique to this run), with bounded concurrency;
  2. pairs G games: the two players of game i join group `group_base + i`, one after the other, so every pair
     meets deterministically; players are spread round-robin over the --url list, and each player's requests
     and stream go to its own URL (players of one game are on different URLs when several are given);
  3. opens the 2G `update` streams and waits until each one has received the pairing snapshot;
  4. drives actions OPEN LOOP at R per second for S seconds: slot k is due at t0 + k/R and is given to a game
     that is ready (no request in flight, its last action's result seen, and the player on turn's stream holds
     the latest snapshot). The request is sent at once, whatever other requests are doing. When no game is ready
     the slot waits in a backlog and goes to the next game that becomes ready; latency is always counted from the
     slot's SCHEDULED time, so a slow server cannot hide its queue. Slots still unsent at the end are reported.
     The action is the legal next request of the game's snapshot: roll when dice is null, pass when mustPass, at
     the fork a random destination, else notify a random legal piece (computed with games/rules/tab.py), or roll
     again when no move is possible but the throw lets the player throw again. Finished games are not replaced:
     they simply stop taking slots (reported as "games finished").
  5. measures, per action: scheduled time → the resulting update on BOTH players' streams (the first message whose
     SSE id, the game version, is greater than the version the sender had seen), and scheduled time → HTTP
     response; errors (non-200, connection errors, timeouts) and deliveries lost (not seen within --timeout).

Register storm (--register-storm N): N new accounts registered as fast as the server allows with --concurrency
requests in flight (closed loop), stopped after --storm-duration seconds at most; requests/s and latency.

Server figures come from /proc: RSS and CPU of the whole tree of every --server-pid (the process and all its
descendants), sampled once a second. Only loopback URLs are accepted. Every phase is bounded in time.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import ipaddress
import json
import math
import os
import random
import resource
import secrets
import socket
import sys
import time
from collections import deque
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import aiohttp

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from protocols.course_api.message import state_of  # noqa: E402  (pure too)

try:  # pragma: no cover - optional
    import uvloop
except ImportError:  # pragma: no cover
    uvloop = None

JSON_HEADERS = {"Content-Type": "application/json"}
# uvloop's loop.time() has millisecond resolution, cached per loop iteration: measure with the OS clock instead.
clock = time.monotonic
PAGE_SIZE = os.sysconf("SC_PAGE_SIZE")
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


# ---------------------------------------------------------------------------------------------------------------
# Figures


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """Keep the load generator's own garbage collector still while it measures: a pause of the generator (a full
    collection of its thousands of connections and the samples it keeps took 55-65 ms, seen with gc.callbacks) would
    count as the server's latency for every request due meanwhile. What the setup made lives until the end: it is
    frozen out of the collector's way; the collector runs again once the block ends."""
    gc.collect()
    gc.freeze()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def summary(values: list[float]) -> dict[str, float] | None:
    """Percentiles (nearest rank) of durations in seconds, returned in milliseconds."""
    if not values:
        return None
    ordered = sorted(values)
    n = len(ordered)

    def rank(p: float) -> float:
        return ordered[min(n - 1, max(0, math.ceil(p * n) - 1))] * 1000

    return {
        "n": n,
        "p50": rank(0.50),
        "p95": rank(0.95),
        "p99": rank(0.99),
        "max": ordered[-1] * 1000,
        "mean": sum(ordered) / n * 1000,
    }


def fmt_ms(value: float) -> str:
    if value >= 10_000:
        return f"{value / 1000:.1f} s"
    if value >= 100:
        return f"{value:.0f} ms"
    if value >= 10:
        return f"{value:.1f} ms"
    return f"{value:.2f} ms"


def fmt_summary(s: dict[str, float] | None) -> str:
    if not s:
        return "n=0"
    return (
        f"n={s['n']:<6} p50 {fmt_ms(s['p50']):>9}  p95 {fmt_ms(s['p95']):>9}  p99 {fmt_ms(s['p99']):>9}  "
        f"max {fmt_ms(s['max']):>9}"
    )


def mib(n_bytes: float) -> str:
    return f"{n_bytes / 2**20:.0f} MiB"


# ---------------------------------------------------------------------------------------------------------------
# The server's process tree, from /proc


class TreeProbe:
    """RSS and CPU time of some processes and all their descendants, read from /proc."""

    def __init__(self, pids: list[int]):
        self.roots = set(pids)
        self.cpu_last: dict[tuple[int, int], int] = {}  # (pid, start time) -> utime + stime ticks last seen
        self.rss = 0
        self.rss_peak = 0
        self.processes = 0

    @staticmethod
    def _stat(pid: str) -> tuple[int, int, int, int] | None:
        try:
            with open(f"/proc/{pid}/stat", "rb") as file:
                data = file.read()
        except OSError:
            return None
        fields = data[data.rindex(b")") + 2 :].split()
        # fields[0] is field 3 (state): ppid 4, utime 14, stime 15, starttime 22, rss 24.
        return int(fields[1]), int(fields[11]) + int(fields[12]), int(fields[19]), int(fields[21])

    def sample(self) -> None:
        if not self.roots:
            return
        stats: dict[int, tuple[int, int, int, int]] = {}
        children: dict[int, list[int]] = {}
        for entry in os.scandir("/proc"):
            if entry.name.isdigit():
                stat = self._stat(entry.name)
                if stat is not None:
                    pid = int(entry.name)
                    stats[pid] = stat
                    children.setdefault(stat[0], []).append(pid)
        tree: set[int] = set()
        todo = [pid for pid in self.roots if pid in stats]
        while todo:
            pid = todo.pop()
            if pid not in tree:
                tree.add(pid)
                todo.extend(children.get(pid, ()))
        rss = 0
        for pid in tree:
            _, ticks, start, pages = stats[pid]
            self.cpu_last[(pid, start)] = ticks
            rss += pages * PAGE_SIZE
        self.rss, self.processes = rss, len(tree)
        self.rss_peak = max(self.rss_peak, rss)

    def cpu_seconds(self) -> float:
        return sum(self.cpu_last.values()) / CLOCK_TICKS


class Monitor:
    """Samples the server tree once a second in a thread, and gives CPU over windows."""

    def __init__(self, pids: list[int]):
        self.probe = TreeProbe(pids)
        self.enabled = bool(pids)
        self.task: asyncio.Task | None = None

    async def start(self) -> None:
        if self.enabled:
            await asyncio.to_thread(self.probe.sample)
            self.task = asyncio.create_task(self._run())

    async def _run(self) -> None:
        while True:
            await asyncio.sleep(1.0)
            await asyncio.to_thread(self.probe.sample)

    async def now(self) -> tuple[float, float, float, float]:
        """Sample now; return (wall time, server CPU seconds, own CPU seconds, whole machine's busy CPU seconds)."""
        if self.enabled:
            await asyncio.to_thread(self.probe.sample)
        return time.monotonic(), self.probe.cpu_seconds(), time.process_time(), machine_busy_seconds()

    async def stop(self) -> None:
        if self.task:
            self.task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self.task


def machine_busy_seconds() -> float:
    """CPU time spent by the whole machine (all cores, all processes), from /proc/stat."""
    try:
        with open("/proc/stat", "rb") as file:
            fields = [int(x) for x in file.readline().split()[1:]]
    except OSError:
        return 0.0
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # idle + iowait
    return (sum(fields[:8]) - idle) / CLOCK_TICKS


def window(start: tuple[float, ...], end: tuple[float, ...]) -> dict[str, float]:
    wall = max(end[0] - start[0], 1e-9)
    server, own, machine = ((end[i] - start[i]) / wall * 100 for i in (1, 2, 3))
    return {
        "wall_s": wall,
        "server_cpu_pct": server,
        "loadgen_cpu_pct": own,
        "machine_cpu_pct": machine,
        # What else ran meanwhile (other programs on a shared machine): figures are only fair when it is small.
        "other_cpu_pct": max(0.0, machine - server - own),
    }


# ---------------------------------------------------------------------------------------------------------------
# The game scenario


class Stream:
    __slots__ = ("game", "side", "player", "version", "count", "open", "first", "error")

    def __init__(self, game: Game, side: int, player: Player):
        self.game, self.side, self.player = game, side, player
        self.version = -1  # last version (SSE id) received on this stream
        self.count = 0  # messages received (the version when a server sends no ids)
        self.open = False
        self.first = False
        self.error: str | None = None


class Player:
    __slots__ = ("nick", "base", "body")

    def __init__(self, nick: str, base: str):
        self.nick, self.base = nick, base


class Action:
    __slots__ = ("kind", "scheduled", "sent", "threshold", "arrivals", "response", "ok")

    def __init__(self, kind: str, scheduled: float, sent: float, threshold: int):
        self.kind, self.scheduled, self.sent, self.threshold = kind, scheduled, sent, threshold
        self.arrivals: list[float | None] = [None, None]
        self.response: float | None = None
        self.ok = False


class Game:
    __slots__ = (
        "index",
        "group",
        "gid",
        "players",
        "streams",
        "side_of",
        "version",
        "raw",
        "message",
        "in_flight",
        "awaiting",
        "queued",
        "finished",
        "dead",
        "errors_in_row",
        "pending",
        "threshold",
    )

    def __init__(self, index: int, group: int, players: list[Player]):
        self.index, self.group, self.players = index, group, players
        self.gid = ""
        self.streams: list[Stream] = []
        self.side_of = {players[0].nick: 0, players[1].nick: 1}
        self.version = -1  # highest version received on either stream
        self.raw = b""  # data of that version
        self.message: dict[str, Any] | None = None  # parsed lazily, once per version
        self.in_flight = False  # a request of this game awaits its response
        self.awaiting = False  # the last action's update has not reached either stream yet
        self.queued = False  # in the ready queue
        self.finished = False
        self.dead = False  # given up: stream dropped, repeated errors
        self.errors_in_row = 0
        self.pending: list[Action] = []
        self.threshold = -1  # the version the last action was sent at: its update is the first one above


def next_action(message: dict[str, Any], rng: random.Random) -> tuple[str, str, dict[str, Any]]:
    """(function, kind for the report, extra arguments): the player on turn's next legal request."""
    if message["dice"] is None:
        return "roll", "roll", {}
    if message.get("mustPass"):
        return "pass", "pass", {}
    if message["step"] == "to":
        return "notify", "notify", {"cell": rng.choice(message["selected"])}
    moves = state_of(message).legal_moves()
    if not moves:
        return "roll", "roll", {}  # no move but the throw lets the player throw again
    return "notify", "notify", {"cell": rng.choice(moves).origin}


class Bench:
    def __init__(self, args: argparse.Namespace, session: aiohttp.ClientSession, monitor: Monitor):
        self.args = args
        self.session = session
        self.monitor = monitor
        self.loop = asyncio.get_running_loop()
        self.rng = random.Random(args.seed)
        self.run_id = secrets.token_hex(3)
        self.password = f"pw-{self.run_id}"
        self.games: list[Game] = []
        self.streams: list[Stream] = []
        self.ready: deque[Game] = deque()
        self.driving = False
        self.closing = False
        # Open-loop schedule.
        self.t0 = 0.0
        self.rate = args.rate[0]
        self.rss_before_streams = self.rss_after_streams = 0
        self.total_slots = 0
        self.next_slot = 0
        # Figures.
        self.sent: dict[str, int] = {}
        self.delivery: dict[str, list[float]] = {"roll": [], "all": []}
        self.first_delivery: dict[str, list[float]] = {"roll": [], "all": []}
        self.response: dict[str, list[float]] = {"roll": [], "all": []}
        self.completed = 0
        self.last_completion = 0.0
        self.errors_http = 0
        self.errors_conn = 0
        self.error_samples: dict[str, int] = {}
        self.lost = 0
        self.streams_dropped = 0
        self.duplicates = 0
        self.games_finished = 0
        self.games_dead = 0
        self.pairing_remaining = 0
        self.pairing_done = asyncio.Event()
        self.ranking_lat: list[float] = []
        self.ranking_errors = 0
        self.ranking_sent = 0
        self.setup_retries = 0
        self.ranking_group = 0  # the group `ranking` asks for; 0: the group of a random game of the run

    # -- helpers ---------------------------------------------------------------------------------------------

    def note_error(self, text: str) -> None:
        text = text[:160]
        if len(self.error_samples) < 20 or text in self.error_samples:
            self.error_samples[text] = self.error_samples.get(text, 0) + 1

    async def post(self, base: str, function: str, payload: dict[str, Any], timeout: float) -> tuple[int, bytes]:
        """POST a JSON body; (status, body), status -1 on a connection error or timeout."""
        try:
            async with self.session.post(
                f"{base}/{function}",
                data=json.dumps(payload, separators=(",", ":")).encode(),
                headers=JSON_HEADERS,
                timeout=aiohttp.ClientTimeout(total=timeout),
            ) as response:
                return response.status, await response.read()
        except (aiohttp.ClientError, TimeoutError, OSError) as error:
            return -1, f"{type(error).__name__}: {error}".encode()

    async def setup_post(self, base: str, function: str, payload: dict[str, Any]) -> tuple[int, bytes]:
        """A setup request, tried again (up to 5 times) when the server answers 5xx: it applied nothing then."""
        for attempt in range(6):
            status, body = await self.post(base, function, payload, self.args.setup_request_timeout)
            if status < 500 or attempt == 5:
                return status, body
            self.setup_retries += 1
            if self.setup_retries <= 3:
                log(f"setup: {function} answered {status} {body[:100]!r}; trying again")
            await asyncio.sleep(0.5 * (attempt + 1))
        return status, body

    async def bounded(self, coroutines: list, concurrency: int, label: str) -> list:
        """Run coroutines with at most `concurrency` at once; results in order."""
        results: list[Any] = [None] * len(coroutines)
        iterator = iter(enumerate(coroutines))

        async def worker() -> None:
            for i, coroutine in iterator:
                results[i] = await coroutine

        await asyncio.gather(*(worker() for _ in range(min(concurrency, len(coroutines)) or 1)))
        return results

    # -- setup -----------------------------------------------------------------------------------------------

    async def setup(self) -> dict[str, Any]:
        args = self.args
        urls = args.url
        figures: dict[str, Any] = {}
        group_base = args.group_base if args.group_base else self.rng.randrange(10**6, 10**9)
        players = [Player(f"b{self.run_id}_{i}", urls[i % len(urls)]) for i in range(2 * args.games)]
        self.games = [Game(i, group_base + i, players[2 * i : 2 * i + 2]) for i in range(args.games)]

        # 1. register
        started = time.monotonic()

        async def register(player: Player) -> None:
            status, body = await self.setup_post(
                player.base, "register", {"nick": player.nick, "password": self.password}
            )
            if status != 200:
                raise RuntimeError(f"register {player.nick}: {status} {body[:200]!r}")

        await self.bounded([register(p) for p in players], args.concurrency, "register")
        elapsed = time.monotonic() - started
        figures["register_s"] = elapsed
        log(f"registered {len(players)} players in {elapsed:.1f} s ({len(players) / elapsed:.0f}/s)")

        if args.ranking_seed:
            # Finished games in one group, so that `ranking` has a table to sort: pair two players, one leaves.
            started = time.monotonic()
            self.ranking_group = group_base - 1
            for j in range(args.ranking_seed):
                first, second = players[(2 * j) % len(players)], players[(2 * j + 1) % len(players)]
                ids = []
                for player in (first, second):
                    payload = {"group": self.ranking_group, "nick": player.nick, "password": self.password}
                    status, body = await self.setup_post(player.base, "join", {**payload, "size": args.size})
                    if status != 200:
                        raise RuntimeError(f"ranking seed, join: {status} {body[:200]!r}")
                    ids.append(json.loads(body)["game"])
                payload = {"nick": first.nick, "password": self.password, "game": ids[0]}
                status, body = await self.setup_post(first.base, "leave", payload)
                if status != 200:
                    raise RuntimeError(f"ranking seed, leave: {status} {body[:200]!r}")
            log(
                f"ranking: {args.ranking_seed} finished games in group {self.ranking_group} "
                f"in {time.monotonic() - started:.1f} s"
            )

        # 2. pair: the first player waits, the second joins the same (group, size)
        started = time.monotonic()

        async def pair(game: Game) -> None:
            ids = []
            for player in game.players:
                status, body = await self.setup_post(
                    player.base,
                    "join",
                    {"group": game.group, "nick": player.nick, "password": self.password, "size": args.size},
                )
                if status != 200:
                    raise RuntimeError(f"join {player.nick}: {status} {body[:200]!r}")
                ids.append(json.loads(body)["game"])
            if ids[0] != ids[1]:
                raise RuntimeError(f"game {game.index}: the pair was not matched ({ids})")
            game.gid = ids[0]

        await self.bounded([pair(g) for g in self.games], args.concurrency, "join")
        elapsed = time.monotonic() - started
        figures["join_s"] = elapsed
        log(f"paired {len(self.games)} games in {elapsed:.1f} s")

        self.rss_before_streams = figures["rss_before_streams"] = await self._settled_rss()
        # 3. open the streams and wait for every pairing snapshot
        started = time.monotonic()
        for game in self.games:
            game.streams = [Stream(game, side, player) for side, player in enumerate(game.players)]
            self.streams.extend(game.streams)
        self.pairing_remaining = len(self.streams)
        opening = asyncio.Semaphore(args.concurrency)
        self.stream_tasks = [asyncio.create_task(self.read_stream(s, opening)) for s in self.streams]
        try:
            await asyncio.wait_for(self.pairing_done.wait(), args.setup_timeout)
        except TimeoutError:
            missing = sum(1 for s in self.streams if not s.first)
            errors = {s.error for s in self.streams if s.error}
            raise RuntimeError(
                f"{missing} of {len(self.streams)} streams got no pairing snapshot within {args.setup_timeout} s "
                f"(errors: {sorted(errors)[:5]})"
            ) from None
        elapsed = time.monotonic() - started
        figures["streams_s"] = elapsed
        log(f"{len(self.streams)} streams open, pairing snapshot on every one, in {elapsed:.1f} s")
        await asyncio.sleep(1.0)
        self.rss_after_streams = figures["rss_after_streams"] = await self._settled_rss()
        return figures

    async def _settled_rss(self) -> int:
        await self.monitor.now()
        return self.monitor.probe.rss

    # -- streams ---------------------------------------------------------------------------------------------

    async def read_stream(self, stream: Stream, opening: asyncio.Semaphore) -> None:
        player, game = stream.player, stream.game
        released = False
        await opening.acquire()
        try:
            async with self.session.get(
                f"{player.base}/update",
                params={"nick": player.nick, "game": game.gid},
                timeout=aiohttp.ClientTimeout(total=None, connect=self.args.setup_request_timeout, sock_read=None),
            ) as response:
                if response.status != 200:
                    stream.error = f"HTTP {response.status}: {(await response.read())[:100]!r}"
                    return
                stream.open = True
                opening.release()
                released = True
                content = response.content
                on_event = self.on_event
                buffer = b""
                while True:
                    chunk = await content.readany()
                    if not chunk:
                        break
                    if b"\r" in chunk:
                        chunk = chunk.replace(b"\r\n", b"\n")
                    buffer = buffer + chunk if buffer else chunk
                    end = buffer.find(b"\n\n")
                    while end >= 0:
                        event = buffer[:end]
                        buffer = buffer[end + 2 :]
                        if event[:1] != b":":
                            on_event(stream, event)
                        end = buffer.find(b"\n\n")
        except asyncio.CancelledError:
            raise
        except Exception as error:  # noqa: BLE001 - any failure of one stream is counted, not fatal
            stream.error = f"{type(error).__name__}: {error}"
        finally:
            if not released:
                opening.release()
            stream.open = False
            if not self.closing and not game.finished:
                self.streams_dropped += 1
                if self.driving and not game.dead:
                    game.dead = True
                    self.games_dead += 1
                if stream.error:
                    self.note_error(f"stream: {stream.error}")

    def on_event(self, stream: Stream, event: bytes) -> None:
        """One SSE message: `id: <version>` and `data: <snapshot>` lines (comment lines ignored)."""
        version = None
        data = None
        for line in event.split(b"\n"):
            if line[:5] == b"data:":
                value = line[6:] if line[5:6] == b" " else line[5:]
                data = value if data is None else data + b"\n" + value
            elif line[:3] == b"id:":
                version = int(line[3:])
        if data is None:
            return
        now = clock()
        stream.count += 1
        if version is None:
            version = stream.count  # a server without ids: both streams number the same messages alike
        if version <= stream.version:
            self.duplicates += 1
            return
        stream.version = version
        game = stream.game
        if version > game.version:
            game.version, game.raw, game.message = version, data, None
        if not stream.first:
            stream.first = True
            self.pairing_remaining -= 1
            if self.pairing_remaining == 0:
                self.pairing_done.set()
        if game.pending:
            side = stream.side
            for action in tuple(game.pending):
                if action.arrivals[side] is None and version > action.threshold:
                    action.arrivals[side] = now
                    if action.arrivals[1 - side] is not None and action.response is not None:
                        self.complete(game, action)
        if game.awaiting and version > game.threshold:
            game.awaiting = False
        if self.driving:
            self.check_ready(game)

    # -- scheduling ------------------------------------------------------------------------------------------

    def check_ready(self, game: Game) -> None:
        if game.queued or game.in_flight or game.awaiting or game.finished or game.dead:
            return
        message = game.message
        if message is None:
            try:
                message = game.message = json.loads(game.raw)
            except ValueError:
                self.note_error("stream: data is not JSON")
                game.dead = True
                self.games_dead += 1
                return
        if "winner" in message:
            game.finished = True
            self.games_finished += 1
            return
        side = game.side_of.get(message.get("turn"))
        if side is None or game.streams[side].version != game.version:
            return  # the player on turn has not seen the latest snapshot yet
        game.queued = True
        self.ready.append(game)
        if self.next_slot < self.due_slots(clock()):
            self.dispatch()

    def due_slots(self, now: float) -> int:
        return min(self.total_slots, int((now - self.t0) * self.rate) + 1) if now >= self.t0 else 0

    def dispatch(self) -> None:
        """Send every due slot that a ready game can take, each with its own scheduled time."""
        if not self.driving:
            return
        now = clock()
        due = self.due_slots(now)
        while self.next_slot < due and self.ready:
            game = self.ready.popleft()
            game.queued = False
            if game.in_flight or game.awaiting or game.finished or game.dead:
                continue
            scheduled = self.t0 + self.next_slot / self.rate
            self.next_slot += 1
            self.send(game, scheduled, now)

    def send(self, game: Game, scheduled: float, now: float) -> None:
        message = game.message
        assert message is not None
        function, kind, extra = next_action(message, self.rng)
        player = game.players[game.side_of[message["turn"]]]
        action = Action(kind, scheduled, now, game.version)
        game.pending.append(action)
        game.in_flight = game.awaiting = True
        game.threshold = game.version
        self.sent[kind] = self.sent.get(kind, 0) + 1
        payload = {"nick": player.nick, "password": self.password, "game": game.gid, **extra}
        self.loop.create_task(self.act(game, action, player.base, function, payload))

    async def act(self, game: Game, action: Action, base: str, function: str, payload: dict[str, Any]) -> None:
        status, body = await self.post(base, function, payload, self.args.timeout)
        now = clock()
        action.response = now
        game.in_flight = False
        if status == 200:
            action.ok = True
            game.errors_in_row = 0
            latency = now - action.scheduled
            self.response["all"].append(latency)
            if action.kind == "roll":
                self.response["roll"].append(latency)
            if action.arrivals[0] is not None and action.arrivals[1] is not None:
                self.complete(game, action)
        else:
            if status < 0:
                self.errors_conn += 1
            else:
                self.errors_http += 1
            self.note_error(f"{function} → {status} {body[:120].decode(errors='replace')}")
            if action in game.pending:
                game.pending.remove(action)
            # No update will come for a refused action (one that came anyway is harmless: versions tell).
            game.awaiting = False
            game.errors_in_row += 1
            # A refusal (4xx) leaves the game as it was: try again, twice. After a timeout or a connection error
            # the server may still apply the action later: the game's state is unknown, stop using it.
            if (status < 0 or game.errors_in_row >= 3) and not game.dead:
                game.dead = True
                self.games_dead += 1
        if self.driving:
            self.check_ready(game)

    def complete(self, game: Game, action: Action) -> None:
        game.pending.remove(action)
        arrivals = action.arrivals
        both = max(arrivals) - action.scheduled  # type: ignore[type-var]
        first = min(arrivals) - action.scheduled  # type: ignore[type-var]
        self.delivery["all"].append(both)
        self.first_delivery["all"].append(first)
        if action.kind == "roll":
            self.delivery["roll"].append(both)
            self.first_delivery["roll"].append(first)
        self.completed += 1
        self.last_completion = max(self.last_completion, max(arrivals), action.response or 0.0)  # type: ignore[type-var]

    def expire(self, now: float, timeout: float) -> None:
        """Count as lost the deliveries not seen `timeout` seconds after their request was sent."""
        for game in self.games:
            if not game.pending:
                continue
            for action in tuple(game.pending):
                if now - action.sent >= timeout and action.response is not None:
                    self.lost += sum(1 for arrival in action.arrivals if arrival is None)
                    game.pending.remove(action)
                    if not game.dead:
                        game.dead = True  # a stream missed an update: stop using this game
                        self.games_dead += 1

    async def dispatcher(self) -> None:
        end = self.t0 + self.args.duration
        rate = self.rate
        while True:
            now = clock()
            if now >= end:
                return
            self.dispatch()
            next_time = self.t0 + (int((now - self.t0) * rate) + 1) / rate
            await asyncio.sleep(max(0.0, min(next_time, end) - clock()))

    async def expirer(self) -> None:
        while True:
            await asyncio.sleep(0.5)
            self.expire(clock(), self.args.timeout)

    async def rankings(self) -> None:
        rate = self.args.ranking_rate
        end = self.t0 + self.args.duration
        tasks = set()
        k = 0
        while True:
            scheduled = self.t0 + k / rate
            if scheduled >= end:
                break
            delay = scheduled - clock()
            if delay > 0:
                await asyncio.sleep(delay)
            game = self.games[self.rng.randrange(len(self.games))]
            base = game.players[0].base
            task = asyncio.create_task(self.ranking(base, self.ranking_group or game.group, scheduled))
            tasks.add(task)
            task.add_done_callback(tasks.discard)
            k += 1
        if tasks:
            await asyncio.wait(tasks, timeout=self.args.timeout + 1)

    async def ranking(self, base: str, group: int, scheduled: float) -> None:
        self.ranking_sent += 1
        status, body = await self.post(base, "ranking", {"group": group, "size": self.args.size}, self.args.timeout)
        if status == 200:
            self.ranking_lat.append(clock() - scheduled)
        else:
            self.ranking_errors += 1
            self.note_error(f"ranking → {status} {body[:120].decode(errors='replace')}")

    # -- the run ---------------------------------------------------------------------------------------------

    def reset_phase(self, rate: float) -> None:
        self.rate = rate
        self.total_slots = int(self.args.duration * rate)
        self.next_slot = 0
        self.sent = {}
        self.delivery = {"roll": [], "all": []}
        self.first_delivery = {"roll": [], "all": []}
        self.response = {"roll": [], "all": []}
        self.completed = 0
        self.last_completion = 0.0
        self.errors_http = self.errors_conn = self.lost = 0
        self.error_samples = {}
        self.ranking_lat = []
        self.ranking_errors = self.ranking_sent = 0
        self.ready.clear()
        revived = 0
        for game in self.games:
            game.queued = False
            # A game given up in an earlier phase (a timeout) comes back if its streams are still open: by now they
            # hold its latest snapshot.
            if game.dead and not game.finished and all(stream.open for stream in game.streams):
                game.dead = game.in_flight = game.awaiting = False
                game.pending.clear()
                game.errors_in_row = 0
                revived += 1
        self.games_dead -= revived
        self.games_finished = 0

    async def run(self) -> list[dict[str, Any]]:
        """Set up once, then one phase per rate of --rate; return the figures of each phase."""
        setup = await self.setup()
        phases = []
        with collector_paused():
            try:
                for index, rate in enumerate(self.args.rate):
                    if index:
                        await asyncio.sleep(self.args.pause)
                    log(f"phase {index + 1}: {rate:g} actions/s for {self.args.duration:g} s")
                    phases.append({**setup, **(await self.phase(rate))})
            finally:
                self.closing = True
                for task in self.stream_tasks:
                    task.cancel()
                await asyncio.gather(*self.stream_tasks, return_exceptions=True)
        return phases

    async def phase(self, rate: float) -> dict[str, Any]:
        args = self.args
        self.reset_phase(rate)
        start = await self.monitor.now()
        self.monitor.probe.rss_peak = self.monitor.probe.rss
        self.t0 = clock() + 0.05
        self.driving = True
        for game in self.games:
            self.check_ready(game)
        background = [asyncio.create_task(self.expirer())]
        ranking_task = asyncio.create_task(self.rankings()) if args.ranking_rate > 0 else None
        await self.dispatcher()
        end = await self.monitor.now()
        self.driving = False
        unsent = self.total_slots - self.next_slot
        # drain: let every request answer and every delivery arrive, or count it lost
        drain_deadline = clock() + args.timeout + 1
        while clock() < drain_deadline:
            if not any(g.pending or g.in_flight for g in self.games):
                break
            await asyncio.sleep(0.05)
        if ranking_task:
            await ranking_task
        for task in background:
            task.cancel()
        for game in self.games:
            for action in game.pending:
                self.lost += sum(1 for arrival in action.arrivals if arrival is None)
                if action.response is None:
                    self.errors_conn += 1
                    self.note_error("no response before the end of the run")
                if not game.dead:
                    game.dead = True
                    self.games_dead += 1
            game.pending.clear()
        streams_open = sum(1 for s in self.streams if s.open)

        span = max(args.duration, (self.last_completion - self.t0) if self.last_completion else 0.0)
        sent_total = sum(self.sent.values())
        streams = len(self.streams)
        figures = {
            "games": len(self.games),
            "streams": streams,
            "streams_open_at_end": streams_open,
            "size": args.size,
            "duration_s": args.duration,
            "offered_per_s": self.total_slots / args.duration,
            "sent": dict(self.sent),
            "sent_total": sent_total,
            "throws_sent_per_s": self.sent.get("roll", 0) / args.duration,
            "unsent_slots": unsent,
            "completed": self.completed,
            "achieved_per_s": self.completed / span if span else 0.0,
            "throws_completed_per_s": len(self.delivery["roll"]) / span if span else 0.0,
            "delivery_roll": summary(self.delivery["roll"]),
            "delivery_all": summary(self.delivery["all"]),
            "first_delivery_roll": summary(self.first_delivery["roll"]),
            "response_roll": summary(self.response["roll"]),
            "response_all": summary(self.response["all"]),
            "errors_http": self.errors_http,
            "errors_connection": self.errors_conn,
            "errors": self.errors_http + self.errors_conn,
            "error_samples": dict(self.error_samples),
            "lost_deliveries": self.lost,
            "streams_dropped": self.streams_dropped,
            "duplicate_messages": self.duplicates,
            "games_finished": self.games_finished,
            "games_dead": self.games_dead,
            "setup_retries": self.setup_retries,
            "server_rss": self.monitor.probe.rss,
            "server_rss_peak": self.monitor.probe.rss_peak,
            "server_processes": self.monitor.probe.processes,
            **window(start, end),
        }
        if self.monitor.enabled and streams:
            figures["rss_per_stream"] = (self.rss_after_streams - self.rss_before_streams) / streams
        if args.ranking_rate > 0:
            figures["ranking"] = {
                "offered_per_s": args.ranking_rate,
                "sent": self.ranking_sent,
                "achieved_per_s": len(self.ranking_lat) / args.duration,
                "errors": self.ranking_errors,
                "latency": summary(self.ranking_lat),
            }
        return figures


# ---------------------------------------------------------------------------------------------------------------
# The register storm


async def register_storm(args: argparse.Namespace, session: aiohttp.ClientSession, monitor: Monitor) -> dict:
    run_id = secrets.token_hex(3)
    n, urls = args.register_storm, args.url
    latencies: list[float] = []
    errors: dict[str, int] = {}
    counter = iter(range(n))
    start = await monitor.now()
    monitor.probe.rss_peak = monitor.probe.rss
    deadline = clock() + args.storm_duration
    timeout = aiohttp.ClientTimeout(total=args.storm_request_timeout)

    async def worker() -> None:
        for i in counter:
            if clock() >= deadline:
                return
            body = json.dumps({"nick": f"s{run_id}_{i}", "password": f"pw-{run_id}-{i}"}).encode()
            sent = clock()
            try:
                async with session.post(
                    f"{urls[i % len(urls)]}/register", data=body, headers=JSON_HEADERS, timeout=timeout
                ) as response:
                    await response.read()
                    status = response.status
            except (aiohttp.ClientError, TimeoutError, OSError) as error:
                status = -1
                key = type(error).__name__
                errors[key] = errors.get(key, 0) + 1
            if status == 200:
                latencies.append(clock() - sent)
            elif status > 0:
                errors[f"HTTP {status}"] = errors.get(f"HTTP {status}", 0) + 1

    await asyncio.gather(*(worker() for _ in range(min(args.concurrency, n))))
    end = await monitor.now()
    figures = {
        "requested": n,
        "registered": len(latencies),
        "concurrency": min(args.concurrency, n),
        "stopped_by_time_cap": len(latencies) + sum(errors.values()) < n,
        "requests_per_s": len(latencies) / (end[0] - start[0]),
        "latency": summary(latencies),
        "errors": sum(errors.values()),
        "error_samples": errors,
        "server_rss": monitor.probe.rss,
        "server_rss_peak": monitor.probe.rss_peak,
        **window(start, end),
    }
    return figures


# ---------------------------------------------------------------------------------------------------------------
# Reports


def print_game_report(f: dict[str, Any], urls: list[str], monitored: bool) -> None:
    out = []
    out.append(f"games {f['games']} (board size {f['size']}), {f['streams']} update streams, on {', '.join(urls)}")
    out.append(
        f"setup: register {f['register_s']:.1f} s, join {f['join_s']:.1f} s, streams {f['streams_s']:.1f} s"
        f"; streams open at the end: {f['streams_open_at_end']}; setup requests retried after a 5xx: "
        f"{f['setup_retries']}"
    )
    sent = ", ".join(f"{k} {v}" for k, v in sorted(f["sent"].items()))
    out.append(
        f"run {f['duration_s']:.0f} s: offered {f['offered_per_s']:.0f} actions/s open loop; sent {f['sent_total']} "
        f"({sent}); unsent slots (no game ready) {f['unsent_slots']}"
    )
    out.append(
        f"achieved {f['achieved_per_s']:.1f} actions/s, of which throws {f['throws_completed_per_s']:.1f}/s "
        f"(throws sent {f['throws_sent_per_s']:.1f}/s)"
    )
    out.append("latency from the scheduled send:")
    out.append(f"  throw → both streams     {fmt_summary(f['delivery_roll'])}")
    out.append(f"  action → both streams    {fmt_summary(f['delivery_all'])}")
    out.append(f"  throw → first stream     {fmt_summary(f['first_delivery_roll'])}")
    out.append(f"  throw → HTTP response    {fmt_summary(f['response_roll'])}")
    out.append(f"  action → HTTP response   {fmt_summary(f['response_all'])}")
    if "ranking" in f:
        r = f["ranking"]
        out.append(
            f"  ranking (offered {r['offered_per_s']:.0f}/s, achieved {r['achieved_per_s']:.1f}/s, "
            f"errors {r['errors']}) {fmt_summary(r['latency'])}"
        )
    out.append(
        f"errors {f['errors']} (HTTP {f['errors_http']}, connection/timeout {f['errors_connection']}), "
        f"lost deliveries {f['lost_deliveries']}, streams dropped {f['streams_dropped']}, "
        f"games finished {f['games_finished']}, games given up {f['games_dead']}"
    )
    for text, count in list(f["error_samples"].items())[:8]:
        out.append(f"    {count} × {text}")
    if monitored:
        per_stream = f.get("rss_per_stream")
        out.append(
            f"server: RSS {mib(f['server_rss'])} at the end, peak {mib(f['server_rss_peak'])} "
            f"({f['server_processes']} processes); "
            f"{per_stream / 1024:.1f} KiB per open stream; CPU {f['server_cpu_pct']:.0f}% of one core over the run"
        )
    out.append(
        f"load generator: CPU {f['loadgen_cpu_pct']:.0f}% of one core; whole machine busy {f['machine_cpu_pct']:.0f}% "
        f"of one core (of {os.cpu_count()}), other processes {f['other_cpu_pct']:.0f}%"
    )
    print("\n".join(out), flush=True)


def print_storm_report(f: dict[str, Any], monitored: bool) -> None:
    cap = " (stopped by the time cap)" if f["stopped_by_time_cap"] else ""
    print(
        f"register storm: {f['registered']} of {f['requested']} accounts in {f['wall_s']:.1f} s{cap}, "
        f"{f['concurrency']} in flight: {f['requests_per_s']:.1f} registrations/s",
        flush=True,
    )
    print(f"  latency (from send)      {fmt_summary(f['latency'])}", flush=True)
    line = f"  errors {f['errors']}"
    if f["error_samples"]:
        line += " " + ", ".join(f"{k}: {v}" for k, v in f["error_samples"].items())
    if monitored:
        line += (
            f"; server RSS {mib(f['server_rss'])} (peak {mib(f['server_rss_peak'])}), "
            f"CPU {f['server_cpu_pct']:.0f}% of one core"
        )
    line += f"; load generator CPU {f['loadgen_cpu_pct']:.0f}%; other processes {f['other_cpu_pct']:.0f}%"
    print(line, flush=True)


def log(text: str) -> None:
    print(f"[load {time.strftime('%H:%M:%S')}] {text}", file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------------------------------------------


def check_loopback(url: str) -> str:
    parts = urlsplit(url)
    if parts.scheme != "http" or not parts.hostname:
        raise SystemExit(f"--url must be http://HOST:PORT, not {url!r}")
    try:
        addresses = {info[4][0] for info in socket.getaddrinfo(parts.hostname, parts.port or 80)}
    except socket.gaierror as error:
        raise SystemExit(f"cannot resolve {parts.hostname}: {error}") from None
    if not all(ipaddress.ip_address(address.split("%")[0]).is_loopback for address in addresses):
        raise SystemExit(f"refusing {url}: this tool only targets loopback addresses")
    return url.rstrip("/")


def raise_file_limit() -> int:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
        soft = hard
    return soft


async def main(args: argparse.Namespace) -> dict[str, Any]:
    results: dict[str, Any] = {"command": " ".join(sys.argv), "urls": args.url}
    monitor = Monitor(args.server_pid)
    await monitor.start()
    connector = aiohttp.TCPConnector(limit=0, limit_per_host=0, keepalive_timeout=60, force_close=False)
    try:
        async with aiohttp.ClientSession(
            connector=connector, auto_decompress=False, timeout=aiohttp.ClientTimeout(total=None)
        ) as session:
            if args.register_storm:
                log(f"register storm: {args.register_storm} accounts, {args.concurrency} in flight")
                storm = await asyncio.wait_for(
                    register_storm(args, session, monitor), args.storm_duration + args.storm_request_timeout + 10
                )
                results["register_storm"] = storm
                print_storm_report(storm, monitor.enabled)
            if args.games:
                bench = Bench(args, session, monitor)
                bound = args.setup_timeout * 4 + len(args.rate) * (args.duration + 2 * args.timeout + args.pause) + 30
                phases = await asyncio.wait_for(bench.run(), bound)
                results["games"] = phases[0]
                results["phases"] = phases
                for figures in phases:
                    print_game_report(figures, args.url, monitor.enabled)
    finally:
        await monitor.stop()
    return results


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--url", action="append", required=True, help="base URL of a server (repeatable)")
    parser.add_argument("--games", type=int, default=0, help="simultaneous games (2 players, 2 streams each)")
    parser.add_argument(
        "--rate",
        type=lambda text: [float(x) for x in text.split(",")],
        default=[100.0],
        help="actions per second offered, open loop; R1,R2,… runs one phase per rate on the same games",
    )
    parser.add_argument("--pause", type=float, default=3.0, help="seconds between phases")
    parser.add_argument("--duration", type=float, default=30.0, help="seconds of driving")
    parser.add_argument("--size", type=int, default=9, help="board size (columns)")
    parser.add_argument("--server-pid", type=int, action="append", default=[], help="server process (tree) to watch")
    parser.add_argument("--ranking-rate", type=float, default=0.0, help="ranking requests per second during the run")
    parser.add_argument(
        "--ranking-seed",
        type=int,
        default=0,
        metavar="K",
        help="first finish K games in one group that ranking asks for",
    )
    parser.add_argument("--register-storm", type=int, default=0, metavar="N", help="register N new accounts first")
    parser.add_argument("--storm-duration", type=float, default=120.0, help="time cap of the register storm (s)")
    parser.add_argument("--storm-request-timeout", type=float, default=120.0, help="timeout of one storm request")
    parser.add_argument("--concurrency", type=int, default=32, help="requests in flight during setup and the storm")
    parser.add_argument("--timeout", type=float, default=10.0, help="seconds before a delivery counts as lost")
    parser.add_argument("--setup-timeout", type=float, default=300.0, help="seconds for the streams to open")
    parser.add_argument("--setup-request-timeout", type=float, default=120.0, help="timeout of one setup request")
    parser.add_argument("--group-base", type=int, default=0, help="first group (default: random per run)")
    parser.add_argument("--seed", type=int, default=None, help="random seed for the choice of moves")
    parser.add_argument("--json", type=Path, help="write the figures to this file")
    args = parser.parse_args(argv)
    args.url = [check_loopback(url) for url in args.url]
    if args.games < 0 or min(args.rate) <= 0 or args.duration <= 0:
        parser.error("--games must be ≥ 0, --rate and --duration > 0")
    if not args.games and not args.register_storm:
        parser.error("nothing to do: give --games G and/or --register-storm N")
    return args


def run(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    limit = raise_file_limit()
    if args.games * 2 + args.concurrency + 100 > limit:
        log(f"warning: {args.games * 2} streams need more than the {limit} file descriptors allowed")
    log(f"event loop: {'uvloop' if uvloop else 'asyncio'}; file descriptors: {limit}")
    if uvloop is not None:
        results = asyncio.run(main(args), loop_factory=uvloop.new_event_loop)
    else:
        results = asyncio.run(main(args))
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(run())
