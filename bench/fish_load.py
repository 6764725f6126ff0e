#!/usr/bin/env python3
"""Load on the Fish player protocol (newline-delimited JSON over TCP): many tournaments at once, one connection per
player held for the whole run, actions offered open loop; latency, errors, the server's memory and CPU.

    python bench/fish_load.py --port 45678 [--tournaments 1000] [--rate 2000] [--duration 20]
                              [--action-share 0.333] [--server-pid PID] [--json out.json]

Setup: opens one TCP connection per player (tournaments of 2, 3 and 4 players in turn, so about 3 connections a
tournament) and holds them all, then has every player join its tournament (`join_tournament`, the first join sets
`players`) and reads the board (`get_state`). With `--server-pid`, the resident memory of the server's process tree is
read before the connections are opened, once they are open (idle), once every player has joined, and at the end.

Run: for `--duration` seconds, request k is due at t0 + k / `--rate`, whatever the answers (open loop). About
`--action-share` of the slots are the placement or move of the player on turn in a random tournament (a legal one,
chosen from the game's state as this client tracks it from its `result_state` answers; a tournament whose previous
action is still unanswered is passed over for another); the others are polls of a random player of a random
tournament: `get_state`, `check_turn`, `check_placement`, `check_move`, `get_moves_for_color`,
`get_moves_for_location`. A request goes out on its player's connection, or, when that one is waiting for an answer,
on an idle connection of another player of the same tournament (tokens are not bound to connections), or else is
pipelined behind the waiting one. Latency runs from the request's due time to its answer, so a server (or a load
generator) that falls behind shows in it. A game that ends is replaced: its players join a fresh tournament on the
same connections (those joins are counted, not timed with the rest).

Every error answer counts, by its `error_type`; so do closed connections, answers of the wrong shape and requests
still unanswered `--drain` seconds after the last one was due. `check_turn` answers that could not have raced with an
action are compared with the turn this client tracks (`tracking_mismatches`: a bug of the client or of the server).
The server should run with a long FISH_TURN_TIMEOUT, so that nobody is removed for time while others are set up.
Standard library only. Prints JSON figures to stdout; progress on stderr.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import math
import os
import random
import resource
import secrets
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from load import collector_paused  # noqa: E402  (bench/load.py)

clock = time.monotonic
PAGE_SIZE = os.sysconf("SC_PAGE_SIZE")
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")

ROWS, COLUMNS = 10, 4
COLOURS = ("red", "white", "brown", "black")
PLACEMENT, MOVEMENT, OVER = "placement", "movement", "over"
POLLS = ("get_state", "check_turn", "check_placement", "check_move", "get_moves_for_color", "get_moves_for_location")
EXPECTED = {
    "get_state": "current_state",
    "check_turn": "color",
    "check_placement": "is_valid",
    "check_move": "is_valid",
    "get_moves_for_color": "reachable_locations",
    "get_moves_for_location": "reachable_locations",
    "place_penguin": "result_state",
    "move_penguin": "result_state",
}
QUANTILES = (("p50", 0.50), ("p90", 0.90), ("p99", 0.99))

type Tile = tuple[int, int]


def log(text: str) -> None:
    print(f"[fish] {text}", file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------------------------------------------
# The board's geometry (the protocol's zig-zag rows): every tile's six straight lines, nearest tile first


def _step(tile: Tile, direction: int) -> Tile:
    row, col = tile
    odd = row % 2
    return {
        0: (row - 2, col),  # north
        1: (row - 1, col + odd),  # northeast
        2: (row + 1, col + odd),  # southeast
        3: (row + 2, col),  # south
        4: (row + 1, col - 1 + odd),  # southwest
        5: (row - 1, col - 1 + odd),  # northwest
    }[direction]


def _line(tile: Tile, direction: int) -> tuple[Tile, ...]:
    tiles = []
    tile = _step(tile, direction)
    while 0 <= tile[0] < ROWS and 0 <= tile[1] < COLUMNS:
        tiles.append(tile)
        tile = _step(tile, direction)
    return tuple(tiles)


LINES: dict[Tile, tuple[tuple[Tile, ...], ...]] = {
    (row, col): tuple(_line((row, col), direction) for direction in range(6))
    for row in range(ROWS)
    for col in range(COLUMNS)
}
TILES: tuple[Tile, ...] = tuple(LINES)


# ---------------------------------------------------------------------------------------------------------------
# Figures


def summary(values: list[float]) -> dict[str, float] | None:
    """Percentiles (nearest rank) of durations in seconds, in milliseconds."""
    if not values:
        return None
    ordered = sorted(values)
    n = len(ordered)
    figures: dict[str, float] = {"n": n}
    for name, p in QUANTILES:
        figures[name] = ordered[min(n - 1, max(0, math.ceil(p * n) - 1))] * 1000
    figures["max"] = ordered[-1] * 1000
    figures["mean"] = sum(ordered) / n * 1000
    return figures


def fmt(s: dict[str, float] | None) -> str:
    if not s:
        return "n=0"
    return f"n={s['n']:,} p50 {s['p50']:.1f} p90 {s['p90']:.1f} p99 {s['p99']:.1f} max {s['max']:.1f} ms"


class TreeProbe:
    """Resident memory and CPU time of a process and all its descendants, read from /proc."""

    def __init__(self, pid: int | None):
        self.pid = pid

    @staticmethod
    def _stat(pid: str) -> tuple[int, int, int] | None:
        try:
            with open(f"/proc/{pid}/stat", "rb") as file:
                data = file.read()
        except OSError:
            return None
        fields = data[data.rindex(b")") + 2 :].split()
        # fields[0] is field 3 (state): ppid is field 4, utime 14, stime 15, rss 24.
        return int(fields[1]), int(fields[11]) + int(fields[12]), int(fields[21]) * PAGE_SIZE

    def sample(self) -> tuple[int, float, int]:
        """Return (resident bytes, CPU seconds, processes) of the tree now."""
        if self.pid is None:
            return 0, 0.0, 0
        stats: dict[int, tuple[int, int, int]] = {}
        children: dict[int, list[int]] = collections.defaultdict(list)
        for entry in os.scandir("/proc"):
            if entry.name.isdigit() and (stat := self._stat(entry.name)) is not None:
                stats[int(entry.name)] = stat
                children[stat[0]].append(int(entry.name))
        tree, todo = set(), [self.pid] if self.pid in stats else []
        while todo:
            pid = todo.pop()
            if pid not in tree:
                tree.add(pid)
                todo.extend(children.get(pid, ()))
        rss = sum(stats[pid][2] for pid in tree)
        ticks = sum(stats[pid][1] for pid in tree)
        return rss, ticks / CLOCK_TICKS, len(tree)


def machine_busy_seconds() -> float:
    """CPU seconds the whole machine has been busy since boot (from /proc/stat)."""
    with open("/proc/stat") as file:
        fields = [int(x) for x in file.readline().split()[1:]]
    return (sum(fields[:8]) - fields[3] - fields[4]) / CLOCK_TICKS


# ---------------------------------------------------------------------------------------------------------------
# One player's connection: requests written at once (pipelined if need be), answers read in order


class Connection:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter):
        self.reader, self.writer = reader, writer
        self.waiting: collections.deque[asyncio.Future[bytes]] = collections.deque()
        self.closed: str | None = None
        self.reading = asyncio.create_task(self._read())

    @classmethod
    async def open(cls, host: str, port: int, tries: int = 5) -> Connection:
        for attempt in range(tries):
            try:
                reader, writer = await asyncio.open_connection(host, port, limit=1 << 20)
                return cls(reader, writer)
            except OSError:
                if attempt == tries - 1:
                    raise
                await asyncio.sleep(0.5 * (attempt + 1))
        raise AssertionError("unreachable")

    async def _read(self) -> None:
        try:
            while True:
                line = await self.reader.readline()
                if not line.endswith(b"\n"):
                    self.closed = "the server closed the connection" if not line else "a line without its end"
                    break
                if not self.waiting:
                    self.closed = "an answer to no request"
                    break
                future = self.waiting.popleft()
                if not future.done():
                    future.set_result(line)
        except Exception as error:  # noqa: BLE001 - any failure ends this connection, and is counted
            self.closed = f"reading failed: {error!r}"
        finally:
            while self.waiting:
                future = self.waiting.popleft()
                if not future.done():
                    future.set_exception(ConnectionError(self.closed))

    def ask(self, request: dict) -> asyncio.Future[bytes]:
        """Send a request now; return the future of its answer line."""
        future = asyncio.get_running_loop().create_future()
        if self.closed:
            future.set_exception(ConnectionError(self.closed))
            return future
        self.waiting.append(future)
        self.writer.write(json.dumps(request, separators=(",", ":")).encode() + b"\n")
        return future

    @property
    def idle(self) -> bool:
        return not self.waiting

    def close(self) -> None:
        self.writer.close()
        self.reading.cancel()


# ---------------------------------------------------------------------------------------------------------------
# A tournament: its players' connections and tokens, and its game as this client tracks it


class SetupError(Exception):
    pass


def parse(line: bytes) -> dict:
    """An answer line as a JSON object ({} when it is not one: counted as an unexpected answer)."""
    try:
        answer = json.loads(line)
    except ValueError:
        return {}
    return answer if isinstance(answer, dict) else {}


class Game:
    def __init__(self, index: int, players: int, connections: list[Connection]):
        self.index, self.players, self.connections = index, players, connections
        self.generation = 0
        self.tokens: list[str] = []
        self.board: list[list[int]] = []
        self.places: list[list[Tile]] = []
        self.phase, self.turn = PLACEMENT, 0
        self.busy = True  # an action or the joins of a new tournament are out
        self.actions_sent = 0

    async def join(self, run: str) -> None:
        """Join a fresh tournament with every player (in join order), then read its board."""
        self.busy = True
        self.generation += 1
        name = f"bench-{run}-{self.index}-{self.generation}"
        tokens = []
        for seat, connection in enumerate(self.connections):
            request: dict = {"action": "join_tournament", "tournament_id": name}
            if seat == 0:
                request["players"] = self.players
            answer = parse(await connection.ask(request))
            if answer.get("color") != COLOURS[seat] or not isinstance(answer.get("user_token"), str):
                raise SetupError(f"join_tournament {name} seat {seat}: {answer}")
            tokens.append(answer["user_token"])
        answer = parse(await self.connections[0].ask({"action": "get_state", "user_token": tokens[0]}))
        if "current_state" not in answer:
            raise SetupError(f"get_state {name}: {answer}")
        self.tokens = tokens
        self.load(answer["current_state"])
        self.phase, self.turn = PLACEMENT, 0
        self.busy = False

    def load(self, state: dict) -> None:
        self.board = state["board"]
        self.places = [[(place["row"], place["col"]) for place in player["places"]] for player in state["players"]]

    # The rules, as far as a client needs them: who is on turn, and what they may do.

    def taken(self) -> set[Tile]:
        return {tile for places in self.places for tile in places}

    def free(self, taken: set[Tile]) -> list[Tile]:
        return [tile for tile in TILES if self.board[tile[0]][tile[1]] and tile not in taken]

    def moves_from(self, tile: Tile, taken: set[Tile]) -> list[tuple[Tile, Tile]]:
        moves = []
        for tiles in LINES[tile]:
            for end in tiles:
                if not self.board[end[0]][end[1]] or end in taken:
                    break
                moves.append((tile, end))
        return moves

    def moves_of(self, seat: int, taken: set[Tile]) -> list[tuple[Tile, Tile]]:
        return [move for tile in self.places[seat] for move in self.moves_from(tile, taken)]

    def pass_turn(self, last: int) -> None:
        """The turn after `last` acted: the next player in join order who may act (`last` itself comes last)."""
        each = 6 - self.players
        if self.phase == PLACEMENT and all(len(places) >= each for places in self.places):
            self.phase = MOVEMENT
        taken = self.taken()
        for step in range(1, self.players + 1):
            seat = (last + step) % self.players
            if len(self.places[seat]) < each if self.phase == PLACEMENT else self.moves_of(seat, taken):
                self.turn = seat
                return
        self.phase, self.turn = OVER, None

    def action(self, rng: random.Random) -> tuple[int, dict]:
        """The player on turn and a legal placement or move of theirs, at random."""
        seat = self.turn
        assert seat is not None
        taken = self.taken()
        token = self.tokens[seat]
        if self.phase == PLACEMENT:
            row, col = rng.choice(self.free(taken))
            return seat, {"action": "place_penguin", "user_token": token, "row": row, "col": col}
        (start_row, start_col), (end_row, end_col) = rng.choice(self.moves_of(seat, taken))
        move = {"start_row": start_row, "start_col": start_col, "end_row": end_row, "end_col": end_col}
        return seat, {"action": "move_penguin", "user_token": token, **move}

    def poll(self, rng: random.Random) -> tuple[int, dict]:
        """A random player's poll: a reading or a check, with fields a client would send."""
        seat = rng.randrange(self.players)
        action = rng.choice(POLLS)
        request: dict = {"action": action, "user_token": self.tokens[seat]}
        taken = self.taken()
        if action == "check_placement":
            row, col = rng.choice(TILES)
            request.update(row=row, col=col)
        elif action == "check_move":
            moves = self.moves_of(seat, taken)
            if moves:
                (start_row, start_col), (end_row, end_col) = rng.choice(moves)
            else:
                (start_row, start_col), (end_row, end_col) = rng.choice(TILES), rng.choice(TILES)
            request.update(start_row=start_row, start_col=start_col, end_row=end_row, end_col=end_col)
        elif action == "get_moves_for_color":
            request["color"] = COLOURS[rng.randrange(self.players)]
        elif action == "get_moves_for_location":
            # A tile without a penguin: only a tile a penguin leaves becomes a hole, so an action still out cannot
            # make this one a hole (which would be an Invalid_Coordinate).
            free = self.free(taken)
            if not free:
                return seat, {"action": "get_state", "user_token": self.tokens[seat]}
            row, col = rng.choice(free)
            request.update(row=row, col=col)
        return seat, request

    def connection_for(self, seat: int) -> tuple[Connection, bool]:
        """The player's own connection if idle, else an idle one of the same tournament, else the player's own
        (pipelined). Also return whether the request is pipelined."""
        own = self.connections[seat]
        if own.idle:
            return own, False
        for connection in self.connections:
            if connection.idle:
                return connection, False
        return own, True


# ---------------------------------------------------------------------------------------------------------------


async def main(args: argparse.Namespace) -> dict:
    rng = random.Random(args.seed)
    probe = TreeProbe(args.server_pid)
    run = secrets.token_hex(3)
    sizes = [(2, 3, 4)[index % 3] for index in range(args.tournaments)]
    results: dict = {
        "tournaments": args.tournaments,
        "connections": sum(sizes),
        "players_mix": {str(n): sizes.count(n) for n in (2, 3, 4)},
        "rate": args.rate,
        "duration": args.duration,
        "action_share": args.action_share,
    }
    rss_before, _, _ = probe.sample()

    # Every player's connection, opened and held idle.
    started = clock()
    semaphore = asyncio.Semaphore(args.concurrency)

    async def connect() -> Connection:
        async with semaphore:
            return await Connection.open(args.host, args.port)

    connections = await asyncio.gather(*(connect() for _ in range(sum(sizes))))
    results["connect_s"] = clock() - started
    log(f"{len(connections):,} connections open in {results['connect_s']:.1f} s")
    await asyncio.sleep(args.settle)
    rss_open, _, processes = probe.sample()

    # Every tournament joined by its players, on their own connections.
    games, at = [], 0
    for index, size in enumerate(sizes):
        games.append(Game(index, size, connections[at : at + size]))
        at += size
    started = clock()

    async def join(game: Game) -> None:
        async with semaphore:
            await game.join(run)

    await asyncio.gather(*(join(game) for game in games))
    results["join_s"] = clock() - started
    log(f"{len(games):,} tournaments joined ({results['connections']:,} players) in {results['join_s']:.1f} s")
    await asyncio.sleep(args.settle)
    rss_joined, _, _ = probe.sample()
    if args.server_pid:
        held = len(connections)
        results.update(
            {
                "server_processes": processes,
                "rss_before_mib": rss_before / 2**20,
                "rss_open_mib": rss_open / 2**20,
                "rss_joined_mib": rss_joined / 2**20,
                "rss_per_connection_idle_kib": (rss_open - rss_before) / held / 1024,
                "rss_per_connection_kib": (rss_joined - rss_before) / held / 1024,
            }
        )
        log(
            f"server RSS {rss_before / 2**20:.0f} MiB before, {rss_open / 2**20:.0f} MiB with the connections open, "
            f"{rss_joined / 2**20:.0f} MiB with every player joined: "
            f"{results['rss_per_connection_kib']:.1f} KiB per held connection"
        )

    # The run, open loop.
    latency: dict[str, list[float]] = {"action": [], "poll": []}
    by_action: dict[str, list[float]] = collections.defaultdict(list)
    errors: collections.Counter[str] = collections.Counter()
    samples: list[str] = []
    counters = collections.Counter()
    replace_latency: list[float] = []
    tasks: set[asyncio.Task] = set()

    def failed(kind: str, detail: str) -> None:
        errors[kind] += 1
        if len(samples) < 10:
            samples.append(detail[:300])

    async def replace(game: Game) -> None:
        started = clock()
        try:
            await game.join(run)
        except (ConnectionError, SetupError, ValueError) as error:
            failed("replacement", repr(error))
            return  # this tournament stays busy: no more actions are offered to it
        replace_latency.append(clock() - started)
        counters["games_replaced"] += 1

    async def act(game: Game, due: float) -> None:
        seat, request = game.action(rng)
        connection, pipelined = game.connection_for(seat)
        counters["pipelined"] += pipelined
        game.actions_sent += 1
        try:
            line = await connection.ask(request)
        except ConnectionError as error:
            failed("connection", f"{request['action']}: {error}")
            return  # this tournament stays busy
        elapsed = clock() - due
        latency["action"].append(elapsed)
        by_action[request["action"]].append(elapsed)
        answer = parse(line)
        if "result_state" in answer:
            game.load(answer["result_state"])
            game.pass_turn(seat)
            if game.phase != OVER:
                game.busy = False
                return
            counters["games_over"] += 1
        else:
            failed(answer.get("error_type", "unexpected answer"), f"{request} -> {line.decode().strip()}")
        # Over, or refused (its sender is removed: this client's tracking no longer holds): a fresh tournament.
        await replace(game)

    async def poll(game: Game, due: float) -> None:
        seat, request = game.poll(rng)
        connection, pipelined = game.connection_for(seat)
        counters["pipelined"] += pipelined
        quiet = not game.busy
        actions_sent, generation, turn = game.actions_sent, game.generation, game.turn
        try:
            line = await connection.ask(request)
        except ConnectionError as error:
            failed("connection", f"{request['action']}: {error}")
            return
        elapsed = clock() - due
        latency["poll"].append(elapsed)
        by_action[request["action"]].append(elapsed)
        answer = parse(line)
        # Whether an action of this tournament was out while the poll was (then the answer may have raced it).
        raced = game.busy or game.actions_sent != actions_sent or game.generation != generation
        if "error_type" in answer:
            failed(answer["error_type"], f"{request} -> {line.decode().strip()}")
        elif EXPECTED[request["action"]] not in answer:
            failed("unexpected answer", f"{request} -> {line.decode().strip()}")
        elif request["action"] == "check_turn" and quiet and not raced:
            counters["turns_checked"] += 1
            expected = None if turn is None else COLOURS[turn]
            if answer["color"] != expected:
                counters["tracking_mismatches"] += 1
                failed("tracking mismatch", f"{request} -> {answer}, expected {expected}")

    def launch(coroutine) -> None:
        task = asyncio.create_task(coroutine)
        tasks.add(task)
        task.add_done_callback(tasks.discard)

    # The generator's own collector stays still while it measures (its pauses would count as the server's).
    with collector_paused():
        count = int(args.rate * args.duration)
        _, server_cpu_before, _ = probe.sample()
        machine_before, own_before = machine_busy_seconds(), time.process_time()
        late = 0.0
        begin = clock()
        for index in range(count):
            due = begin + index / args.rate
            delay = due - clock()
            if delay > 0:
                await asyncio.sleep(delay)
            else:
                late = max(late, -delay)
            game = games[rng.randrange(len(games))]
            if math.floor((index + 1) * args.action_share) > math.floor(index * args.action_share):
                counters["actions_offered"] += 1
                if game.busy:
                    start = rng.randrange(len(games))
                    game = next((other for other in games[start:] + games[:start] if not other.busy), None)
                    if game is None:
                        counters["actions_unsent"] += 1
                        continue
                game.busy = True  # now, not when its task starts: the next slot may come before that
                launch(act(game, due))
            else:
                counters["polls_offered"] += 1
                launch(poll(game, due))
        schedule_end = clock()
        # Every request answered, or given up after --drain s (the replacements' joins are waited for too).
        pending = set(tasks)
        if pending:
            _, pending = await asyncio.wait(pending, timeout=args.drain)
        unanswered = len(pending)
        for task in pending:
            task.cancel()
    if unanswered:
        errors["unanswered"] += unanswered
    answered = len(latency["action"]) + len(latency["poll"])
    last = clock()
    elapsed = last - begin
    rss_end, server_cpu_after, _ = probe.sample()
    machine_after, own_after = machine_busy_seconds(), time.process_time()
    server_cpu = server_cpu_after - server_cpu_before
    own_cpu = own_after - own_before
    results.update(
        {
            "offered": count,
            "offered_per_s": count / (schedule_end - begin) if count else 0,
            "actions_offered": counters["actions_offered"],
            "actions_unsent": counters["actions_unsent"],
            "polls_offered": counters["polls_offered"],
            "answered": answered,
            "actions_answered": len(latency["action"]),
            "polls_answered": len(latency["poll"]),
            "achieved_per_s": answered / elapsed,
            "actions_per_s": len(latency["action"]) / elapsed,
            "polls_per_s": len(latency["poll"]) / elapsed,
            "window_s": elapsed,
            "schedule_s": schedule_end - begin,
            "generator_late_max_ms": late * 1000,
            "pipelined": counters["pipelined"],
            "errors": sum(errors.values()),
            "errors_by_type": dict(errors),
            "error_samples": samples,
            "action_ms": summary(latency["action"]),
            "poll_ms": summary(latency["poll"]),
            "all_ms": summary(latency["action"] + latency["poll"]),
            "by_action_ms": {name: summary(values) for name, values in sorted(by_action.items())},
            "games_over": counters["games_over"],
            "games_replaced": counters["games_replaced"],
            "replace_ms": summary(replace_latency),
            "turns_checked": counters["turns_checked"],
            "tracking_mismatches": counters["tracking_mismatches"],
            "connections_closed": sum(1 for connection in connections if connection.closed),
            "generator_cpu_percent": 100 * own_cpu / elapsed,
            "machine_cpu_percent": 100 * (machine_after - machine_before) / elapsed,
        }
    )
    if args.server_pid:
        results["server_cpu_percent"] = 100 * server_cpu / elapsed
        results["other_cpu_percent"] = max(0.0, 100 * (machine_after - machine_before - server_cpu - own_cpu) / elapsed)
        results["rss_end_mib"] = rss_end / 2**20
    log(
        f"offered {count:,} in {results['schedule_s']:.1f} s ({results['offered_per_s']:.0f}/s), answered "
        f"{answered:,} ({results['achieved_per_s']:.0f}/s); errors {results['errors']} {dict(errors) or ''}"
    )
    log(f"actions: {fmt(results['action_ms'])}")
    log(f"polls:   {fmt(results['poll_ms'])}")
    if args.server_pid:
        log(
            f"server CPU {results['server_cpu_percent']:.0f}% of one core, load generator "
            f"{results['generator_cpu_percent']:.0f}%, others {results['other_cpu_percent']:.0f}%"
        )
    for connection in connections:
        connection.close()
    return results


def run() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=45678)
    parser.add_argument("--tournaments", type=int, default=1000)
    parser.add_argument("--rate", type=float, default=2000, help="requests offered per second")
    parser.add_argument("--duration", type=float, default=20.0, help="seconds of the open-loop schedule")
    parser.add_argument("--action-share", type=float, default=1 / 3, help="share of the slots that are actions")
    parser.add_argument("--concurrency", type=int, default=64, help="connections opened / tournaments joined at once")
    parser.add_argument("--settle", type=float, default=2.0, help="seconds to wait before reading the server's memory")
    parser.add_argument("--drain", type=float, default=120.0, help="seconds to wait for answers after the schedule")
    parser.add_argument("--server-pid", type=int, help="the server's process: its memory and CPU are measured")
    parser.add_argument("--seed", type=int)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    if not 0 <= args.action_share <= 1 or args.rate <= 0 or args.tournaments < 1:
        parser.error("--action-share is between 0 and 1, --rate is positive, --tournaments at least 1")
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY:
        hard = max(soft, 1 << 20)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    results = asyncio.run(main(args))
    text = json.dumps(results, indent=2)
    if args.json:
        args.json.write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(run())
