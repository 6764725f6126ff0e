#!/usr/bin/env python3
"""`make bench`: start our server as `make run` does, drive it with bench/load.py, report in Markdown.

    python bench/run.py                 # quick: 1,000 games for 30 s, and a small register storm (a few minutes)
    python bench/run.py --full          # every scenario of issue 4 (about half an hour against today's server)
    python bench/run.py --games-1k --ranking --profile   # pick scenarios; profile the server with py-spy
    python bench/run.py --games-1k --rate-1k 10,20,40,80 --duration 20   # one phase per rate, same games
    python bench/run.py --deadlines     # 10,000 turn deadlines: the sweeper's idle cost and how late they fire
    python bench/run.py --draughts      # 1,000 draughts rooms over TLS, 2,000 commands/s; 10,000 rooms' clocks
    python bench/run.py --plakoto       # 1,000 Plakoto tables: moves and status polls through the REST API
    python bench/run.py --fish          # 1,000 Fish tournaments (about 3,000 TCP connections), 2,000 requests/s
    python bench/run.py --games-1k --floor   # and the same load against the floor (bench/floor.py), for ratios
    python bench/run.py --games-1k --production   # and in the production configuration: PostgreSQL, Redis, 2 workers

Each scenario gets a fresh server (gunicorn -c tabsite/gunicorn.conf.py tabsite.asgi:application, uvicorn
workers, WEB_CONCURRENCY as given) on a free loopback port, with TAB_VAR_DIR=var/bench/<timestamp>/<scenario>/, so
a fresh SQLite database migrated first; DATABASE_URL and REDIS_URL are passed on when set (PostgreSQL and Redis are
then shared by the scenarios, not fresh). The game scenarios run the server with Django's MD5 password hasher
(PASSWORD_HASHERS): registering thousands of players with the production hasher (Argon2) would take most of the run;
the register storm is measured with both. The turn timeout is raised to an hour (TAB_TURN_TIMEOUT) so that no game
expires while the others are being set up, and the abuse limits are off (all the players come from one address).
Every garbage collection of the server's processes is timed (bench/collector/ on its PYTHONPATH) and the
game scenarios report those made while the load ran: a collection holds the GIL, and every request waits for it.
So are the batches of database calls (core/dbthread.py): how many a second, their size, and the CPU a batch costs
beyond its calls' own (its transaction, its trips to Redis).
BENCH_COLLECTOR_CENSUS=N in the environment also counts, by type, what the young generation holds when a collection
begins with at least N objects in it (collector-census.log beside each scenario's collector.log; it pauses the server
itself, so not for latency figures).
The report goes to stdout and to var/bench/latest.md (and the run's folder), ready to paste into BENCHMARKS.md. The
server is stopped at the end, on errors and on Ctrl-C.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import json
import os
import platform
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
LOAD = ROOT / "bench" / "load.py"
COLLECTOR = ROOT / "bench" / "collector"
BIN = Path(sys.executable).parent
FAST_HASHER = "django.contrib.auth.hashers.MD5PasswordHasher"
TURN_TIMEOUT = "3600"
# The Fish server's turn timeout during its scenario: nobody is removed for time while the others are set up.
FISH_TURN_TIMEOUT = "600"
# All the players come from 127.0.0.1: the limits per address are lifted; the limits per nick stay on, as in
# production (one stream per player, no wrong password: they cost their checks, and refuse nothing).
LIMITS = ("TAB_REGISTER_PER_MINUTE", "TAB_JOIN_PER_MINUTE", "TAB_HASHES_PER_MINUTE")
STREAMS_READY = "pairing snapshot on every one"
QUANTILES = ("p50", "p95", "p99", "max")
PROFILE_RATE = int(os.environ.get("PROFILE_RATE", "20"))
IDLE_FRAMES = {
    "_worker (concurrent/futures/thread.py)",
    "Condition.wait (threading.py)",
    "Event.wait (threading.py)",
    "Thread._wait_for_tstate_lock (threading.py)",
    "Arbiter.wait_for_signals (gunicorn/arbiter.py)",
    "Arbiter.sleep (gunicorn/arbiter.py)",
}


def machine_busy(seconds: float = 2.0) -> float:
    """CPU used by the whole machine over a few seconds, in % of one core (from /proc/stat)."""

    def busy() -> tuple[float, float]:
        with open("/proc/stat") as file:
            fields = [int(x) for x in file.readline().split()[1:]]
        idle = fields[3] + fields[4]
        return sum(fields[:8]) - idle, time.monotonic()

    (b0, t0), _ = busy(), time.sleep(seconds)
    b1, t1 = busy()
    return (b1 - b0) / os.sysconf("SC_CLK_TCK") / (t1 - t0) * 100


def wait_quiet(limit: float, threshold: float = 30.0) -> float:
    """Wait (up to `limit` s) until other programs leave the machine alone; return how busy it was at the start."""
    deadline = time.monotonic() + limit
    while True:
        busy = machine_busy()
        if busy < threshold or time.monotonic() >= deadline:
            if busy >= threshold:
                say(f"the machine is busy ({busy:.0f}% of one core used by other programs): figures will suffer")
            return busy
        say(f"waiting for a quiet machine ({busy:.0f}% of one core busy)")
        time.sleep(3)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def say(text: str) -> None:
    print(f"[bench {time.strftime('%H:%M:%S')}] {text}", flush=True)


class Server:
    """Our server, started the way `make run` starts it, on a fresh var folder."""

    def __init__(self, workdir: Path, *, fast_hasher: bool):
        self.workdir = workdir
        workdir.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        self.draughts_port = free_port()
        self.fish_port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = workdir / "server.log"
        self.env = {
            **os.environ,
            "TAB_VAR_DIR": str(workdir),
            "HOST": "127.0.0.1",
            "PORT": str(self.port),
            "DRAUGHTS_PORT": str(self.draughts_port),
            "FISH_PORT": str(self.fish_port),
            "TAB_TURN_TIMEOUT": os.environ.get("TAB_TURN_TIMEOUT", TURN_TIMEOUT),
            "PYTHONUNBUFFERED": "1",
            # Thousands of players register, join and stream from this one address: the abuse limits would refuse
            # them (0 turns a limit off; set one in the environment to measure the server with it).
            **{name: os.environ.get(name, "0") for name in LIMITS},
        }
        self.env.pop("ACCESS_LOG", None)
        # Each garbage collection of the server's processes, timed (bench/collector/sitecustomize.py).
        self.collector_log = workdir / "collector.log"
        self.env["BENCH_COLLECTOR_LOG"] = str(self.collector_log)
        # And the batches of database calls (bench/collector/sitecustomize.py too): their count, size and CPU, a line
        # a second a process.
        self.batches_log = workdir / "batches.log"
        self.env["BENCH_BATCHES_LOG"] = str(self.batches_log)
        self.env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(COLLECTOR), os.environ.get("PYTHONPATH")]))
        # The analysis of finished games runs beside the server at a low priority: here it would take the idle CPU
        # the figures are about, and count in the server's CPU (its process is the server's child).
        self.env["ANALYSIS"] = "off"
        if fast_hasher:
            self.env["PASSWORD_HASHERS"] = FAST_HASHER
        else:
            self.env.pop("PASSWORD_HASHERS", None)
        self.process: subprocess.Popen | None = None

    def start(self) -> None:
        subprocess.run(
            [sys.executable, "manage.py", "migrate", "--noinput", "--verbosity", "0"],
            cwd=ROOT,
            env=self.env,
            check=True,
        )
        gunicorn = BIN / "gunicorn"
        command = [str(gunicorn)] if gunicorn.exists() else [sys.executable, "-m", "gunicorn"]
        self.serve([*command, "-c", "tabsite/gunicorn.conf.py", "tabsite.asgi:application"])

    def serve(self, command: list[str]) -> None:
        """Start the server's command and wait for its home page to answer (a minute at most)."""
        with self.log.open("wb") as log:
            # A session of its own: Ctrl-C reaches this script, which then stops the server in order.
            self.process = subprocess.Popen(
                command, cwd=ROOT, env=self.env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
            )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"the server exited ({self.process.returncode}):\n{self.log_tail()}")
            try:
                with urllib.request.urlopen(self.url + "/", timeout=2) as response:
                    if response.status == 200:
                        return
            except (urllib.error.URLError, OSError):
                pass
            time.sleep(0.2)
        raise RuntimeError(f"the server did not answer within 60 s:\n{self.log_tail()}")

    @property
    def pid(self) -> int:
        assert self.process is not None
        return self.process.pid

    def log_tail(self, lines: int = 30) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

    def stop(self) -> None:
        process = self.process
        if process is None or process.poll() is not None:
            return
        try:
            os.killpg(process.pid, signal.SIGTERM)
        except ProcessLookupError:
            return
        try:
            process.wait(20)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait()


class FloorServer(Server):
    """The floor (bench/floor.py): a minimal in-memory server of the course API, the same load's lower bound."""

    def start(self) -> None:
        self.serve([sys.executable, str(ROOT / "bench" / "floor.py"), "--port", str(self.port)])


def postgres_admin_url() -> str:
    return os.environ.get("BENCH_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/postgres")


def postgres_reach() -> str:
    """How the production scenario reaches PostgreSQL: over TCP, or through a Unix socket (a host that is a folder)."""
    from psycopg.conninfo import conninfo_to_dict

    host = str(conninfo_to_dict(postgres_admin_url()).get("host") or "")
    if not host:
        return "libpq's default Unix socket"
    return f"a Unix socket in {host}" if host.startswith("/") else f"TCP to {host}"


class ProductionServer(Server):
    """Our server in the production configuration: PostgreSQL (a database of its own, made for the scenario and dropped
    after it), Redis (a database number of its own, emptied first) and two workers. The servers are the machine's:
    BENCH_POSTGRES_URL names the PostgreSQL server's maintenance database, BENCH_REDIS_URL the Redis database."""

    def __init__(self, workdir: Path, *, fast_hasher: bool):
        super().__init__(workdir, fast_hasher=fast_hasher)
        self.admin_url = postgres_admin_url()
        self.database = f"tab_bench_{os.getpid()}"
        self.env["DATABASE_URL"] = urllib.parse.urlsplit(self.admin_url)._replace(path=f"/{self.database}").geturl()
        self.env["REDIS_URL"] = os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/13")
        self.env["WEB_CONCURRENCY"] = os.environ.get("BENCH_PRODUCTION_WORKERS", "2")
        self.env.pop("TAB_DATABASE_CALLS", None)

    def _admin(self, statement: str) -> None:
        import psycopg
        from psycopg import sql

        with psycopg.connect(self.admin_url, autocommit=True, connect_timeout=5) as db:
            db.execute(sql.SQL(statement).format(sql.Identifier(self.database)))

    def start(self) -> None:
        import redis

        self._admin("DROP DATABASE IF EXISTS {} WITH (FORCE)")
        self._admin("CREATE DATABASE {}")
        redis.Redis.from_url(self.env["REDIS_URL"], socket_connect_timeout=5).flushdb()
        super().start()

    def stop(self) -> None:
        super().stop()
        with contextlib.suppress(Exception):
            self._admin("DROP DATABASE IF EXISTS {} WITH (FORCE)")


class Profiler:
    """py-spy on the server's whole process tree for a while, as collapsed stacks; summarised afterwards."""

    def __init__(self, server: Server, output: Path, duration: float):
        self.server, self.output, self.duration = server, output, duration
        self.process: subprocess.Popen | None = None

    def start(self) -> None:
        py_spy = BIN / "py-spy" if (BIN / "py-spy").exists() else shutil.which("py-spy")
        if not py_spy:
            say("py-spy is not installed (pip install py-spy): no profile")
            return
        command = [str(py_spy), "record", "--pid", str(self.server.pid), "--subprocesses", "--nonblocking"]
        command += [
            "--rate",
            str(PROFILE_RATE),
            "--duration",
            str(int(self.duration)),
            "--format",
            "raw",
            "-o",
            str(self.output),
        ]
        say("profiling: " + shlex.join(command))
        self.process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def wait(self) -> None:
        if self.process is not None:
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                self.process.terminate()
                self.process.wait()


def summarise_profile(path: Path, top: int = 15) -> str:
    """The hottest functions of a py-spy raw profile: by own samples and including callees."""
    own: collections.Counter[str] = collections.Counter()
    inclusive: collections.Counter[str] = collections.Counter()
    total = 0
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return "(no profile)"
    idle = 0
    for line in text.splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack or not count.isdigit():
            continue
        n = int(count)
        frames = [re.sub(r":\d+\)$", ")", frame) for frame in stack.split(";")[2:] if frame]
        if not frames or frames[-1] in IDLE_FRAMES:
            # py-spy cannot tell these parked threads from running ones: a thread pool's worker waiting for work,
            # a thread waiting on a lock or an event, gunicorn's arbiter asleep.
            idle += n
            continue
        total += n
        own[frames[-1]] += n
        for frame in set(frames):
            inclusive[frame] += n
    if not total:
        return "(empty profile)"
    lines = [
        f"{total} samples of the server's threads that were not parked ({idle} parked samples left out; py-spy, "
        f"{PROFILE_RATE} Hz). Time inside SQLite (including waits for its write lock) counts here, idle time of "
        "the event loop shows as Runner.run (uvloop is C).",
        "",
        "Own time:",
        "",
    ]
    lines += [f"    {n / total * 100:5.1f}%  {frame}" for frame, n in own.most_common(top)]
    lines += ["", "Including callees:", ""]
    lines += [f"    {n / total * 100:5.1f}%  {frame}" for frame, n in inclusive.most_common(top + 15)]
    return "\n".join(lines)


def run_load(name: str, server: Server, load_args: list[str], profile: Profiler | None) -> dict[str, Any]:
    """Run bench/load.py against the server; return its figures (and pass its output through)."""
    out = server.workdir / f"{name}.json"
    command = [sys.executable, str(LOAD), "--url", server.url, "--server-pid", str(server.pid), "--json", str(out)]
    command += load_args
    say("$ " + shlex.join([Path(command[0]).name, *command[1:]]))
    process = subprocess.Popen(command, cwd=ROOT, stderr=subprocess.PIPE, text=True)
    text_lines: list[str] = []
    driving_from = time.time()

    def relay() -> None:
        nonlocal driving_from
        assert process.stderr is not None
        for line in process.stderr:
            sys.stderr.write(line)
            text_lines.append(line)
            if STREAMS_READY in line:
                driving_from = time.time()
                if profile is not None:
                    profile.start()

    reader = threading.Thread(target=relay, daemon=True)
    reader.start()
    try:
        code = process.wait()
    finally:
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
        reader.join(5)
    if profile is not None:
        profile.wait()
    if code != 0 or not out.exists():
        raise RuntimeError(f"load generator failed ({code}):\n{''.join(text_lines[-15:])}\n{server.log_tail(15)}")
    figures = json.loads(out.read_text())
    figures["collector"] = collector_pauses(server.collector_log, driving_from, time.time())
    figures["batches"] = database_batches(server.batches_log, driving_from, time.time())
    return figures


def collector_pauses(log: Path, start: float, end: float) -> dict[str, Any]:
    """The server's garbage collections between `start` and `end` (epoch seconds): by generation, how many and the
    longest (wall ms); their CPU in all (ms) and the seconds they span."""
    by_generation: dict[int, list[float]] = {0: [], 1: [], 2: []}
    cpu = 0.0
    with contextlib.suppress(OSError):
        for line in log.read_text().splitlines():
            try:  # a line cut short (a process killed while writing it) is left out
                _pid, at, generation, wall, spent = line.split()
                at_s, generation_n, wall_ms, spent_ms = float(at), int(generation), float(wall), float(spent)
            except ValueError:
                continue
            if start <= at_s <= end:
                by_generation[generation_n].append(wall_ms)
                cpu += spent_ms
    return {"generations": by_generation, "cpu_ms": cpu, "seconds": end - start}


def database_batches(log: Path, start: float, end: float) -> dict[str, Any]:
    """The server's batches of database calls whose seconds ended between `start` and `end` (epoch seconds), all its
    processes together: how many, how many calls, the CPU spent in them and, of it, in the calls (ms)."""
    totals = {"batches": 0, "calls": 0, "cpu_ms": 0.0, "calls_cpu_ms": 0.0, "seconds": end - start}
    with contextlib.suppress(OSError):
        for line in log.read_text().splitlines():
            try:  # a line cut short (a process killed while writing it) is left out
                _pid, at, batches, calls, cpu, calls_cpu = line.split()
                at_s, counts, spent = float(at), (int(batches), int(calls)), (float(cpu), float(calls_cpu))
            except ValueError:
                continue
            if start <= at_s <= end:
                totals["batches"] += counts[0]
                totals["calls"] += counts[1]
                totals["cpu_ms"] += spent[0]
                totals["calls_cpu_ms"] += spent[1]
    return totals


# ---------------------------------------------------------------------------------------------------------------
# Markdown


def machine() -> str:
    model = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    ram = "?"
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                ram = f"{int(line.split()[1]) / 2**20:.1f} GiB"
                break
    except OSError:
        pass
    return (
        f"{os.cpu_count()} cores (`nproc`), {model}, {ram} RAM; Linux {platform.release()}, "
        f"Python {platform.python_version()}"
    )


def ms(summary: dict[str, float] | None, *keys: str) -> str:
    if not summary:
        return "–"

    def one(value: float) -> str:
        if value >= 10_000:
            return f"{value / 1000:.1f} s"
        return f"{value:.0f}" if value >= 100 else f"{value:.1f}"

    return " / ".join(one(summary[key]) for key in keys)


def mib(value: float) -> str:
    return f"{value / 2**20:.0f} MiB"


def game_rows(name: str, f: dict[str, Any]) -> list[str]:
    sent = f["sent"]
    errors = f"{f['errors']}" + (f" ({f['errors_http']} HTTP, {f['errors_connection']} conn.)" if f["errors"] else "")
    per_stream = f.get("rss_per_stream")
    rows = [
        f"| scenario | {name} |",
        "|---|---|",
        f"| games / streams open (at the end) | {f['games']:,} / {f['streams']:,} ({f['streams_open_at_end']:,}) |",
        f"| run | {f['duration_s']:.0f} s, board size {f['size']} |",
        f"| offered (open loop) | {f['offered_per_s']:.0f} actions/s |",
        f"| sent | {f['sent_total']:,} ({', '.join(f'{k} {v:,}' for k, v in sorted(sent.items()))}); "
        f"unsent slots (no game ready): {f['unsent_slots']:,} |",
        f"| achieved | **{f['achieved_per_s']:.1f} actions/s**, of which {f['throws_completed_per_s']:.1f} throws/s |",
        f"| throw → both streams, p50 / p95 / p99 / max (ms) | **{ms(f['delivery_roll'], *QUANTILES)}** |",
        f"| any action → both streams, p50 / p95 / p99 / max (ms) | {ms(f['delivery_all'], *QUANTILES)} |",
        f"| throw → HTTP response, p50 / p95 / p99 (ms) | {ms(f['response_roll'], 'p50', 'p95', 'p99')} |",
        f"| errors / lost deliveries / streams dropped | {errors} / {f['lost_deliveries']} / {f['streams_dropped']} |",
    ]
    if "ranking" in f:
        r = f["ranking"]
        rows.append(
            f"| ranking under this load: offered / achieved, p50 / p95 / p99 (ms), errors | "
            f"{r['offered_per_s']:.0f}/s / {r['achieved_per_s']:.1f}/s, {ms(r['latency'], 'p50', 'p95', 'p99')}, "
            f"{r['errors']} |"
        )
    rows += [
        f"| server RSS, whole tree (peak) | {mib(f['server_rss'])} ({mib(f['server_rss_peak'])}) |",
        f"| server RSS per open stream | {per_stream / 1024:.1f} KiB |" if per_stream is not None else "",
        f"| server CPU over the run | {f['server_cpu_pct']:.0f}% of one core (of {os.cpu_count()}) |",
        f"| load generator CPU | {f['loadgen_cpu_pct']:.0f}% of one core |",
        f"| other programs' CPU during the run (shared machine) | {f.get('other_cpu_pct', 0):.0f}% of one core |",
        f"| setup: register / join / open streams (requests retried after a 5xx) | {f['register_s']:.0f} s / "
        f"{f['join_s']:.0f} s / {f['streams_s']:.0f} s ({f.get('setup_retries', 0)}) |",
    ]
    return [row for row in rows if row]


def ratio_row(name: str, cpu_per_action: dict[str, tuple[float, float, float]]) -> str:
    """The row comparing the server's CPU an action in this scenario with our embedded server's (games-1k) at the same
    rate in this run: the floor's and the production configuration's targets are ratios to it. Each entry: the
    server's CPU an action, the rate, and the other programs' CPU an action (PostgreSQL and Redis, for production)."""
    ours = cpu_per_action.get("games-1k")
    if name not in ("floor", "production") or ours is None or ours[1] != cpu_per_action[name][1]:
        return ""
    theirs, _, others = cpu_per_action[name]
    if name == "floor":
        return (
            f"| server CPU an action: ours (games-1k, this run) / the floor's | {ours[0]:.2f} / {theirs:.2f} ms: "
            f"**{ours[0] / theirs:.2f}×** |"
        )
    return (
        f"| server CPU an action: production / embedded (games-1k, this run) | the workers {theirs:.2f} / "
        f"{ours[0]:.2f} ms: **{theirs / ours[0]:.2f}×**; with the other programs' (PostgreSQL and Redis here; the "
        f"embedded run's others beside it) {theirs + others:.2f} / {ours[0] + ours[2]:.2f} ms: "
        f"**{(theirs + others) / (ours[0] + ours[2]):.2f}×** |"
    )


def collector_row(collector: dict[str, Any] | None, phases: int) -> str:
    """The row of the server's garbage collections while the load ran (`collector_pauses`)."""
    if not collector:
        return ""
    counts = " / ".join(
        f"{len(pauses)} ({max(pauses):.1f})" if pauses else "0" for pauses in collector["generations"].values()
    )
    share = collector["cpu_ms"] / 10 / collector["seconds"] if collector["seconds"] > 0 else 0.0
    span = " (all phases)" if phases > 1 else ""
    return (
        f"| the collector in the server while driving{span}: young / middle / full collections (longest, ms) | "
        f"{counts}; {collector['cpu_ms']:.0f} ms of CPU ({share:.1f}% of one core) |"
    )


def batches_row(batches: dict[str, Any] | None, phases: int) -> str:
    """The row of the server's batches of database calls while the load ran (`database_batches`)."""
    if not batches or not batches["batches"] or batches["seconds"] <= 0:
        return ""
    count, calls = batches["batches"], batches["calls"]
    per_batch, in_calls = batches["cpu_ms"] * 1000 / count, batches["calls_cpu_ms"] * 1000 / count
    span = " (all phases)" if phases > 1 else ""
    return (
        f"| batches of database calls while driving{span}: a second, calls a batch; the CPU of a batch, of which its "
        f"calls, and the rest (µs) | {count / batches['seconds']:.0f}, {calls / count:.1f}; {per_batch:.0f}, "
        f"{in_calls:.0f} ({in_calls * count / calls:.0f} a call), {per_batch - in_calls:.0f} |"
    )


def storm_rows(results: list[tuple[str, dict[str, Any]]]) -> list[str]:
    rows = [
        "| password hasher | accounts registered | in flight | registrations/s | p50 / p95 / p99 / max (ms) | errors "
        "| server CPU | other programs' CPU |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for hasher, f in results:
        capped = f" of {f['requested']:,} (time cap)" if f["stopped_by_time_cap"] else ""
        rows.append(
            f"| {hasher} | {f['registered']:,}{capped} in {f['wall_s']:.0f} s | {f['concurrency']} | "
            f"**{f['requests_per_s']:.1f}** | {ms(f['latency'], 'p50', 'p95', 'p99', 'max')} | {f['errors']} | "
            f"{f['server_cpu_pct']:.0f}% | {f.get('other_cpu_pct', 0):.0f}% |"
        )
    return rows


# ---------------------------------------------------------------------------------------------------------------


def run_script(script: str, server: Server, arguments: list[str], run_dir: Path) -> dict[str, Any]:
    """Run a load generator of bench/ against `server` (its CPU and memory measured); return the figures it wrote."""
    output = run_dir / Path(script).with_suffix(".json").name
    command = [sys.executable, str(ROOT / "bench" / script), *arguments]
    command += ["--server-pid", str(server.pid), "--json", str(output)]
    subprocess.run(command, cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
    return json.loads(output.read_text())


def draughts_scenario(run_dir: Path, args: argparse.Namespace, duration: float) -> list[str]:
    """1,000 rooms (2,000 TLS connections held) with commands offered open loop; then 10,000 rooms' clocks."""
    say(f"scenario draughts: 1,000 rooms, {args.draughts_rate:g} commands/s")
    busy = wait_quiet(args.wait_quiet)
    server = Server(run_dir / "draughts", fast_hasher=True)
    server.start()
    try:
        arguments = ["--port", str(server.draughts_port), "--rooms", "1000", "--rate", f"{args.draughts_rate:g}"]
        figures = run_script("draughts_load.py", server, [*arguments, "--duration", f"{duration:g}"], run_dir)
    finally:
        server.stop()
    rows = ["| measure | value |", "|---|---|"]
    rows.append(f"| rooms made (CREATE, JOIN: 2,000 TLS connections) | {figures['setup_s']:.1f} s |")
    rows.append(
        f"| server memory, before → with the 2,000 connections held | {figures['memory_before_mib']:.0f} → "
        f"{figures['memory_after_mib']:.0f} MiB: **{figures['memory_per_connection_kib']:.1f} KiB per connection** |"
    )
    rows.append(
        f"| commands offered / answered | {figures['offered']:,} / {figures['answered']:,} "
        f"({figures['achieved_per_s']:.0f}/s; {figures['skipped']:,} not sent: their room's previous still out) |"
    )
    rows.append(f"| errors | {figures['errors']} |")
    rows.append(
        f"| server CPU over the run / load generator's | {figures['server_cpu_percent']:.0f}% / "
        f"{figures['generator_cpu_percent']:.0f}% of one core (of {os.cpu_count()}) |"
    )
    for name, label in (("all_ms", "every command"), ("MOVE", "MOVE"), ("GET_STATE", "GET_STATE")):
        summary = figures[name] if name == "all_ms" else figures["latency_ms"][name]
        latency = ms(summary, *QUANTILES)
        rows.append(f"| {label}: from its scheduled time to its answer, p50 / p95 / p99 / max (ms) | {latency} |")
    rows.append(f"| games over and rooms made again during the run | {figures['rooms_made_again']} |")
    rows.append(f"| machine busy just before (other programs) | {busy:.0f}% of one core |")
    label = f"Draughts: 1,000 rooms over TLS, {args.draughts_rate:g} commands/s offered (half MOVE), {duration:g} s"
    sections = [f"### {label}\n\n" + "\n".join(rows)]
    say("scenario draughts clocks: 10,000 rooms in play")
    wait_quiet(args.wait_quiet)
    command_line = [sys.executable, str(ROOT / "bench" / "deadlines.py"), "--games", "10000", "--kind", "draughts"]
    env = {**os.environ, "TAB_SWEEP_INTERVAL_MS": "500"}
    clocks = subprocess.run(command_line, cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True, check=True)
    sections.append(clocks.stdout.strip())
    return sections


def plakoto_scenario(run_dir: Path, args: argparse.Namespace, duration: float) -> list[str]:
    """1,000 Plakoto tables in play, moves and status polls offered open loop through the REST API."""
    moves, polls = args.plakoto_moves, args.plakoto_polls
    say(f"scenario plakoto: 1,000 tables, {moves:g} moves/s and {polls:g} status polls/s")
    busy = wait_quiet(args.wait_quiet)
    server = Server(run_dir / "plakoto", fast_hasher=True)
    server.start()
    try:
        arguments = ["--url", server.url, "--tables", "1000", "--moves", f"{moves:g}", "--polls", f"{polls:g}"]
        figures = run_script("plakoto_load.py", server, [*arguments, "--duration", f"{duration:g}"], run_dir)
    finally:
        server.stop()
    rows = ["| measure | value |", "|---|---|"]
    rows.append(f"| tables seated (both seats, through the API) | {figures['setup_s']:.1f} s |")
    rows.append(
        f"| moves answered | {figures['moves_answered']:,} ({figures['moves_achieved_per_s']:.0f}/s; "
        f"{figures['moves_skipped']:,} not sent: no table ready) |"
    )
    rows.append(f"| status polls answered | {figures['polls_answered']:,} ({figures['polls_achieved_per_s']:.0f}/s) |")
    rows.append(f"| errors | {figures['errors']} |")
    rows.append(
        f"| move: from its scheduled time to its answer, p50 / p95 / p99 / max (ms) | "
        f"{ms(figures['move_ms'], *QUANTILES)} |"
    )
    rows.append(f"| status poll, the same (ms) | {ms(figures['poll_ms'], *QUANTILES)} |")
    rows.append(f"| server CPU over the run | {figures['server_cpu_percent']:.0f}% of one core (of {os.cpu_count()}) |")
    rows.append(
        f"| load generator CPU | {figures['generator_cpu_percent']:.0f}% of one core (at most "
        f"{figures['generator_behind_ms']:.0f} ms behind its schedule; {figures['connections_opened']:,} connections "
        "opened) |"
    )
    rows.append(f"| machine busy just before (other programs) | {busy:.0f}% of one core |")
    label = f"Plakoto: 1,000 tables, {moves:g} moves/s and {polls:g} status polls/s offered, {duration:g} s"
    return [f"### {label}\n\n" + "\n".join(rows)]


def fish_scenario(run_dir: Path, args: argparse.Namespace) -> list[str]:
    """Fish tournaments of 2–4 players on the TCP protocol, every player's connection held; requests offered open
    loop, a third of them placements and moves, the rest polls."""
    tournaments, rate, duration = args.fish_tournaments, args.fish_rate, args.fish_duration
    say(f"scenario fish: {tournaments:,} tournaments, {rate:g} requests/s for {duration:g} s")
    busy = wait_quiet(args.wait_quiet)
    server = Server(run_dir / "fish", fast_hasher=True)
    server.env["FISH_TURN_TIMEOUT"] = os.environ.get("FISH_TURN_TIMEOUT", FISH_TURN_TIMEOUT)
    server.start()
    try:
        arguments = ["--port", str(server.fish_port), "--tournaments", str(tournaments), "--rate", f"{rate:g}"]
        figures = run_script("fish_load.py", server, [*arguments, "--duration", f"{duration:g}"], run_dir)
        exited = server.process.poll() if server.process is not None else None
    finally:
        server.stop()
    server_log = server.log.read_text(errors="replace")
    tracebacks = server_log.count("Traceback (most recent call last)")
    mix = ", ".join(f"{count:,} of {players}" for players, count in figures["players_mix"].items())
    by_type = ", ".join(f"{name} {count:,}" for name, count in sorted(figures["errors_by_type"].items()))
    quantiles = ("p50", "p90", "p99", "max")
    rows = ["| measure | value |", "|---|---|"]
    rows.append(
        f"| tournaments (players each) / TCP connections held | {figures['tournaments']:,} ({mix}) / "
        f"{figures['connections']:,} |"
    )
    rows.append(
        f"| setup: connections opened / every player joined | {figures['connect_s']:.1f} s / "
        f"{figures['join_s']:.1f} s |"
    )
    rows.append(
        f"| server memory: before → connections open (idle) → every player joined | {figures['rss_before_mib']:.0f} → "
        f"{figures['rss_open_mib']:.0f} → {figures['rss_joined_mib']:.0f} MiB "
        f"({figures['server_processes']} processes) |"
    )
    rows.append(
        f"| server memory per held connection (joined; idle) | **{figures['rss_per_connection_kib']:.1f} KiB** "
        f"({figures['rss_per_connection_idle_kib']:.1f} KiB) |"
    )
    rows.append(
        f"| offered (open loop) | {figures['offered']:,} requests, {figures['offered_per_s']:.0f}/s: "
        f"{figures['actions_offered']:,} actions ({figures['actions_unsent']:,} not sent: no tournament free), "
        f"{figures['polls_offered']:,} polls |"
    )
    rows.append(
        f"| answered | {figures['answered']:,}: **{figures['achieved_per_s']:.0f}/s** "
        f"({figures['actions_per_s']:.0f} actions/s, {figures['polls_per_s']:.0f} polls/s; "
        f"{figures['pipelined']:,} pipelined behind another request) |"
    )
    rows.append(f"| errors | **{figures['errors']}**" + (f" ({by_type})" if by_type else "") + " |")
    rows.append(
        f"| place/move: from its scheduled time to its answer, p50 / p90 / p99 / max (ms) | "
        f"**{ms(figures['action_ms'], *quantiles)}** |"
    )
    rows.append(f"| polls, the same (ms) | **{ms(figures['poll_ms'], *quantiles)}** |")
    for name, summary in figures["by_action_ms"].items():
        rows.append(f"| `{name}` ({summary['n']:,}), p50 / p90 / p99 / max (ms) | {ms(summary, *quantiles)} |")
    rows.append(
        f"| games over and replaced by a fresh tournament | {figures['games_over']:,} "
        f"(joins p50 / p99 {ms(figures['replace_ms'], 'p50', 'p99')} ms) |"
    )
    rows.append(
        f"| turn tracked by the client vs. `check_turn` | {figures['tracking_mismatches']} mismatches "
        f"in {figures['turns_checked']:,} |"
    )
    rows.append(f"| server CPU over the run | {figures['server_cpu_percent']:.0f}% of one core (of {os.cpu_count()}) |")
    rows.append(
        f"| load generator CPU / other programs' | {figures['generator_cpu_percent']:.0f}% / "
        f"{figures['other_cpu_percent']:.0f}% of one core (the generator was at most "
        f"{figures['generator_late_max_ms']:.0f} ms behind its schedule) |"
    )
    rows.append(f"| server memory at the end | {figures['rss_end_mib']:.0f} MiB |")
    rows.append(f"| tracebacks in the server's log | {tracebacks} |")
    if exited is not None:
        rows.append(f"| **the server exited during the run** | exit status {exited}; its log: `{server.log}` |")
    rows.append(f"| machine busy just before (other programs) | {busy:.0f}% of one core |")
    label = (
        f"Fish: {tournaments:,} tournaments ({figures['connections']:,} TCP connections), {rate:g} requests/s "
        f"offered (a third placements and moves), {duration:g} s"
    )
    return [f"### {label}\n\n" + "\n".join(rows)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--full", action="store_true", help="every scenario, at full length")
    parser.add_argument("--games-1k", action="store_true", help="1,000 games at --rate-1k actions/s")
    parser.add_argument("--games-5k", action="store_true", help="5,000 games (10,000 streams) at --rate-5k")
    parser.add_argument("--storm", action="store_true", help="register storm, fast and production hashers")
    parser.add_argument("--ranking", action="store_true", help="ranking requests under game load")
    parser.add_argument("--deadlines", action="store_true", help="10,000 turn deadlines: idle cost and lateness")
    parser.add_argument("--draughts", action="store_true", help="1,000 draughts rooms over TLS; 10,000 rooms' clocks")
    parser.add_argument("--draughts-rate", type=float, default=2000, help="draughts commands/s offered")
    parser.add_argument("--plakoto", action="store_true", help="1,000 Plakoto tables: moves and polls over REST")
    parser.add_argument("--plakoto-moves", type=float, default=1000, help="Plakoto moves/s offered")
    parser.add_argument("--plakoto-polls", type=float, default=2000, help="Plakoto status polls/s offered")
    parser.add_argument("--fish", action="store_true", help="Fish tournaments over TCP: actions and polls")
    parser.add_argument("--fish-tournaments", type=int, default=1000, help="Fish tournaments of 2, 3 and 4 players")
    parser.add_argument("--fish-rate", type=float, default=2000, help="Fish requests/s offered (a third actions)")
    parser.add_argument("--fish-duration", type=float, default=20, help="seconds of the Fish scenario's schedule")
    parser.add_argument("--duration", type=float, help="seconds of driving per game scenario (30; 60 with --full)")
    parser.add_argument(
        "--rate-1k",
        default="1000",
        help="actions/s for 1,000 games (1000 ≈ 500 throws/s: about half of the actions are throws)",
    )
    parser.add_argument("--rate-5k", default="400", help="actions/s for 5,000 games (≈ 200 throws/s)")
    parser.add_argument("--storm-accounts", type=int, help="accounts of the storm (2,000; 10,000 with --full)")
    parser.add_argument(
        "--storm-cap", type=float, help="time cap of each storm in s (20; 180 with --full; Argon2 at most 60)"
    )
    parser.add_argument("--ranking-rate", type=float, default=100, help="ranking requests/s under load")
    parser.add_argument(
        "--wait-quiet", type=float, default=120, help="wait up to this many s for other programs to go quiet"
    )
    parser.add_argument(
        "--floor", action="store_true", help="the 1,000 games' load against bench/floor.py too (with --full too)"
    )
    parser.add_argument(
        "--production",
        action="store_true",
        help="the 1,000 games' load in the production configuration (PostgreSQL, Redis, two workers; with --full too)",
    )
    parser.add_argument("--profile", action="store_true", help="record the server with py-spy during game runs")
    parser.add_argument("--out", type=Path, default=ROOT / "var" / "bench", help="folder of the runs")
    args = parser.parse_args()

    scenarios = (
        "games_1k",
        "floor",
        "production",
        "games_5k",
        "storm",
        "ranking",
        "deadlines",
        "draughts",
        "plakoto",
        "fish",
    )
    chosen = {name for name in scenarios if getattr(args, name)}
    if args.full:
        chosen = set(scenarios)
    elif not chosen:
        chosen = {"games_1k", "storm", "draughts", "plakoto", "fish"}
    duration = args.duration or (60.0 if args.full else 30.0)
    storm_accounts = args.storm_accounts or (10_000 if args.full else 2_000)
    storm_cap = args.storm_cap or (180.0 if args.full else 20.0)

    stamp = time.strftime("%Y%m%d-%H%M%S")
    run_dir = args.out / stamp
    run_dir.mkdir(parents=True, exist_ok=True)
    command = "make bench" if os.environ.get("MAKELEVEL") else shlex.join(["python", "bench/run.py", *sys.argv[1:]])
    workers = os.environ.get("WEB_CONCURRENCY", "default (gunicorn.conf.py: 1 without REDIS_URL)")
    database = "PostgreSQL (DATABASE_URL)" if os.environ.get("DATABASE_URL") else "SQLite (WAL), fresh per scenario"
    events = "Redis (REDIS_URL)" if os.environ.get("REDIS_URL") else "in-process"

    def stop_on_term(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stop_on_term)

    sections: list[str] = []
    storms: list[tuple[str, dict[str, Any]]] = []
    profiles: list[str] = []
    server: Server | None = None

    # In each game scenario's first phase: the server's CPU an action (ms), its rate, and the other programs' CPU an
    # action (ms): the ratios between scenarios (`ratio_row`).
    cpu_per_action: dict[str, tuple[float, float, float]] = {}

    def game_scenario(
        name: str, label_of: Any, games: int, rates: list[float], extra: list[str], kind: type[Server] = Server
    ) -> None:
        nonlocal server
        say(f"scenario {name}: " + "; ".join(label_of(rate) for rate in rates))
        busy = wait_quiet(args.wait_quiet)
        server = kind(run_dir / name, fast_hasher=True)
        try:
            server.start()
        except Exception as error:  # noqa: BLE001 - a scenario that cannot start is reported, the others run
            say(f"scenario {name} not run: {error}")
            sections.append(f"### {label_of(rates[0])}\n\nNot run: the server could not start ({error}).")
            server.stop()
            server = None
            return
        profiler = None
        if args.profile:
            profiler = Profiler(server, run_dir / f"{name}-profile.txt", max(5.0, duration - 5))
        load_args = ["--games", str(games), "--rate", ",".join(f"{rate:g}" for rate in rates)]
        results = run_load(name, server, [*load_args, "--duration", str(duration), *extra], profiler)
        server.stop()
        for index, (rate, figures) in enumerate(zip(rates, results.get("phases") or [results["games"]], strict=False)):
            label = label_of(rate)
            rows = game_rows(label, figures)
            if row := collector_row(results.get("collector"), len(rates)):
                rows.append(row)
            if row := batches_row(results.get("batches"), len(rates)):
                rows.append(row)
            if index == 0 and figures["achieved_per_s"] > 0:
                per_action = 10 / figures["achieved_per_s"]
                cpu_per_action[name] = (
                    figures["server_cpu_pct"] * per_action,
                    rate,
                    figures.get("other_cpu_pct", 0) * per_action,
                )
                if row := ratio_row(name, cpu_per_action):
                    rows.append(row)
            rows.append(f"| machine busy just before (other programs) | {busy:.0f}% of one core |")
            sections.append(f"### {label}\n\n" + "\n".join(rows))
        if profiler is not None and profiler.process is not None:
            summary = summarise_profile(profiler.output)
            label = label_of(rates[0])
            profiles.append(f"#### Profile: {label}\n\n{summary}\n\n(raw stacks: `{profiler.output}`)")
            print(summary, flush=True)

    def rates_of(text: str) -> list[float]:
        return [float(x) for x in text.split(",")]

    started = time.monotonic()
    try:
        if "games_1k" in chosen:
            game_scenario(
                "games-1k",
                lambda rate: f"1,000 games, {rate:g} actions/s offered (≈ {rate / 2:g} throws/s), {duration:g} s",
                1000,
                rates_of(args.rate_1k),
                [],
            )
        if "floor" in chosen:
            game_scenario(
                "floor",
                lambda rate: (
                    f"The floor (bench/floor.py: in memory, no framework): 1,000 games, {rate:g} actions/s offered, "
                    f"{duration:g} s"
                ),
                1000,
                rates_of(args.rate_1k),
                [],
                FloorServer,
            )
        if "production" in chosen:
            game_scenario(
                "production",
                lambda rate: (
                    f"The production configuration (PostgreSQL through {postgres_reach()}, Redis, two workers): "
                    f"1,000 games, {rate:g} actions/s offered, {duration:g} s"
                ),
                1000,
                rates_of(args.rate_1k),
                [],
                ProductionServer,
            )
        if "games_5k" in chosen:
            game_scenario(
                "games-5k",
                lambda rate: (
                    f"5,000 games (10,000 streams), {rate:g} actions/s offered (≈ {rate / 2:g} throws/s), "
                    f"{duration:g} s"
                ),
                5000,
                rates_of(args.rate_5k),
                ["--setup-timeout", "900"],
            )
        if "ranking" in chosen:
            game_scenario(
                "ranking",
                lambda rate: (
                    f"ranking at {args.ranking_rate:g}/s under 1,000 games at {rate:g} actions/s, {duration:g} s"
                ),
                1000,
                [rates_of(args.rate_1k)[0] / 2],
                ["--ranking-rate", str(args.ranking_rate), "--ranking-seed", "200"],
            )
        if "storm" in chosen:
            for hasher, fast in (("MD5 (test hasher)", True), ("Argon2 (production)", False)):
                say(f"scenario register storm, {hasher}")
                wait_quiet(args.wait_quiet)
                server = Server(run_dir / ("storm-md5" if fast else "storm-pbkdf2"), fast_hasher=fast)
                server.start()
                # The production hasher costs a fifth of a second of CPU per account: its storm is capped at a minute.
                cap = storm_cap if fast else min(storm_cap, 60.0)
                load_args = ["--register-storm", str(storm_accounts), "--storm-duration", str(cap)]
                load_args += ["--concurrency", "64" if fast else "16"]
                storms.append((hasher, run_load("storm", server, load_args, None)["register_storm"]))
                server.stop()
        if "deadlines" in chosen:
            say("scenario turn deadlines: 10,000 games in play")
            wait_quiet(args.wait_quiet)
            command_line = [sys.executable, str(ROOT / "bench" / "deadlines.py"), "--games", "10000"]
            env = {**os.environ, "TAB_SWEEP_INTERVAL_MS": "500"}
            deadlines = subprocess.run(command_line, cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True, check=True)
            sections.append(deadlines.stdout.strip())
        if "draughts" in chosen:
            sections.extend(draughts_scenario(run_dir, args, duration))
            server = None
        if "plakoto" in chosen:
            sections.extend(plakoto_scenario(run_dir, args, duration))
        if "fish" in chosen:
            sections.extend(fish_scenario(run_dir, args))
    except KeyboardInterrupt:
        say("interrupted: stopping the server")
        return 130
    finally:
        if server is not None:
            server.stop()

    header = [
        f"## Benchmark of {time.strftime('%Y-%m-%d %H:%M %Z')}",
        "",
        f"- Command: `{command}` ({time.monotonic() - started:.0f} s in all)",
        f"- Machine: {machine()}; the load generator runs on the same machine",
        f"- Server: gunicorn + uvicorn workers, WEB_CONCURRENCY={workers}; database: {database}; events: {events}",
        "- Game scenarios: server started with PASSWORD_HASHERS=MD5PasswordHasher (setup speed only) and "
        f"TAB_TURN_TIMEOUT={TURN_TIMEOUT}; load generator `bench/load.py` (aiohttp, uvloop), latency counted from "
        "each action's scheduled time (open loop)",
    ]
    body = list(sections)
    if storms:
        body.append(
            f"### Register storm ({storm_accounts:,} new accounts, time cap {storm_cap:.0f} s, Argon2 at most 60 s)\n\n"
            + "\n".join(storm_rows(storms))
        )
    markdown = "\n".join(header) + "\n\n" + "\n\n".join(body) + "\n"
    if profiles:
        markdown += "\n" + "\n\n".join(profiles) + "\n"
    (run_dir / "report.md").write_text(markdown)
    (args.out / "latest.md").write_text(markdown)
    print("\n" + markdown, flush=True)
    say(f"written to {args.out / 'latest.md'} and {run_dir / 'report.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
