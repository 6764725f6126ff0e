"""Secrets and deployment: passwords stored only as Django hashes, a credential cache without passwords, production
settings that pass `check --deploy`, DEBUG off unless asked, and server errors that show no traceback."""

import json
import os
import platform
import subprocess
import sys

import pytest
from django.contrib.auth.hashers import check_password, identify_hasher
from django.db import connection

from core import interpreter
from tabsite import settings as project_settings

from .live import ROOT, free_port

PRODUCTION = {
    "SECRET_KEY": "a-long-random-secret-for-the-deploy-check-0123456789-abcdefghijklmnop",
    "ALLOWED_HOSTS": "tab.example.org",
    "CSRF_TRUSTED_ORIGINS": "https://tab.example.org",
    "HTTPS": "1",
    "TRUSTED_PROXIES": "1",
    "HSTS_PRELOAD": "1",
}


def manage(*args: str, **environment: str) -> subprocess.CompletedProcess:
    env = {key: value for key, value in os.environ.items() if key not in ("DEBUG", "REDIS_URL", *PRODUCTION)}
    return subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env={**env, **environment}, capture_output=True, text=True
    )


def test_the_production_settings_pass_the_deploy_check():
    result = manage("check", "--deploy", "--fail-level", "WARNING", **PRODUCTION)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "System check identified no issues" in result.stdout
    # The laptop defaults are not for production, and the check says so.
    assert manage("check", "--deploy", "--fail-level", "WARNING").returncode != 0


def test_debug_is_off_unless_asked():
    show = (
        "shell",
        "--no-imports",
        "-c",
        "from django.conf import settings; print(settings.DEBUG, settings.SECURE_SSL_REDIRECT)",
    )
    assert manage(*show).stdout.split() == ["False", "False"]
    assert manage(*show, DEBUG="1").stdout.split() == ["True", "False"]
    assert manage(*show, **PRODUCTION).stdout.split() == ["False", "True"]


def test_postgresql_gets_its_values_apart_and_prepares_statements_unless_told_not_to():
    show = (
        "shell",
        "--no-imports",
        "-c",
        "from django.conf import settings; options = settings.DATABASES['default']['OPTIONS'];"
        "print(options['server_side_binding'], options['prepare_threshold'])",
    )
    url = "postgresql://someone@db.example.org:5432/tab"
    assert manage(*show, DATABASE_URL=url).stdout.split() == ["True", "5"]
    assert manage(*show, DATABASE_URL=url, PG_PREPARE_THRESHOLD="0").stdout.split() == ["True", "None"]


def test_postgresql_on_the_same_machine_is_reached_through_its_unix_socket():
    """A DATABASE_URL whose host is the folder of PostgreSQL's socket, its slashes written %2F (README, Operating:
    cheaper than TCP to 127.0.0.1)."""
    from urllib.parse import quote

    import psycopg
    from psycopg.conninfo import conninfo_to_dict

    from .conftest import require
    from .live import POSTGRES_ADMIN_URL, postgres_available

    require(postgres_available(), "PostgreSQL")
    with psycopg.connect(POSTGRES_ADMIN_URL) as db:
        folders = db.execute("SHOW unix_socket_directories").fetchone()[0]
    folder = folders.split(",")[0].strip()
    assert folder, "this PostgreSQL server listens on no Unix socket"
    admin = conninfo_to_dict(POSTGRES_ADMIN_URL)
    url = f"postgresql://{admin.get('user', 'postgres')}@{quote(folder, safe='')}/{admin.get('dbname', 'postgres')}"
    show = (
        "shell",
        "--no-imports",
        "-c",
        "from django.db import connection; connection.ensure_connection(); print(connection.connection.info.host)",
    )
    result = manage(*show, DATABASE_URL=url)
    assert result.stdout.split() == [folder], result.stderr


def test_the_database_calls_run_on_the_event_loop_with_sqlite_in_one_process_and_in_a_thread_otherwise(tmp_path):
    show = ("shell", "--no-imports", "-c", "from django.conf import settings; print(settings.TAB_DATABASE_CALLS)")
    sqlite = {"DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}"}
    assert manage(*show, **sqlite).stdout.split() == ["loop"]
    # With Redis, several processes may share the file: one waiting for its write lock must not stall its loop.
    assert manage(*show, **sqlite, REDIS_URL="redis://127.0.0.1:6379/0").stdout.split() == ["thread"]
    assert manage(*show, **sqlite, TAB_DATABASE_CALLS="thread").stdout.split() == ["thread"]
    assert manage(*show, DATABASE_URL="postgresql://someone@db.example.org:5432/tab").stdout.split() == ["thread"]
    refused = manage(*show, DATABASE_URL="postgresql://someone@db.example.org:5432/tab", TAB_DATABASE_CALLS="loop")
    assert refused.returncode != 0 and "TAB_DATABASE_CALLS=loop is for SQLite" in refused.stderr


def test_a_batch_waits_for_company_twice_its_window_at_most_unless_told_and_never_less_than_its_window(tmp_path):
    show = ("shell", "--no-imports", "-c", "from django.conf import settings; print(settings.TAB_BATCH_GATHER_MAX_MS)")
    postgresql = {"DATABASE_URL": "postgresql://someone@db.example.org:5432/tab"}
    assert manage(*show, **postgresql).stdout.split() == ["20"]
    assert manage(*show, **postgresql, TAB_BATCH_GATHER_MS="15").stdout.split() == ["30"]
    assert manage(*show, **postgresql, TAB_BATCH_GATHER_MAX_MS="10").stdout.split() == ["10"]
    refused = manage(*show, **postgresql, TAB_BATCH_GATHER_MAX_MS="5")
    assert refused.returncode != 0 and "TAB_BATCH_GATHER_MAX_MS must be at least TAB_BATCH_GATHER_MS" in refused.stderr


@pytest.mark.django_db
def test_passwords_are_stored_only_as_django_hashes(api, settings):
    settings.PASSWORD_HASHERS = project_settings.PASSWORD_HASHERS
    passwords = {"zp": "zp-secret-1", "jpleal": "jpleal-secret-2"}
    for nick, password in passwords.items():
        assert api("register", {"nick": nick, "password": password}) == (200, {})
        assert api("register", {"nick": nick, "password": password + "x"})[0] == 401
        assert api("join", {"nick": nick, "password": password, "group": 1, "size": 9})[0] == 200
    # Every row of every table, as text: no password anywhere, and the users' column holds Django hashes.
    with connection.cursor() as cursor:
        for table in connection.introspection.table_names():
            cursor.execute(f'SELECT * FROM "{table}"')
            text = repr(cursor.fetchall())
            assert not any(password in text for password in passwords.values()), table
        cursor.execute('SELECT username, password FROM "auth_user"')
        for nick, stored in cursor.fetchall():
            assert identify_hasher(stored).algorithm == "argon2"
            assert check_password(passwords[nick], stored)


@pytest.mark.server
@pytest.mark.redis
def test_the_credential_cache_holds_no_password(start_server):
    import redis

    from .conftest import require
    from .live import REDIS_TEST_URL, redis_available, redis_flush

    require(redis_available(), "Redis")
    redis_flush()
    server = start_server(REDIS_URL=REDIS_TEST_URL, TAB_STREAMS_PER_NICK="5")
    # Nicks long enough that no hash or serialized value in the dump spells them by chance (a two-letter one did).
    passwords = {"zpcached": "zp-cache-secret", "jpleal": "jpleal-cache-secret"}
    for nick, password in passwords.items():
        assert server.call("register", nick=nick, password=password) == (200, {})
        assert server.call("register", nick=nick, password="wrong-" + password)[0] == 401
        assert server.call("join", nick=nick, password=password, group=1, size=9)[0] == 200
    store = redis.Redis.from_url(REDIS_TEST_URL)
    keys = store.keys("*")
    assert keys, "the cache is in Redis"
    held = b"".join(key + (store.dump(key) or b"") for key in keys)
    for nick, password in passwords.items():
        assert password.encode() not in held
        assert nick.encode() not in held  # keys are keyed hashes of the nick


@pytest.mark.server
def test_server_errors_are_json_without_a_traceback(start_server, live_databases):
    from .faults import query

    database_url = live_databases.new()
    server = start_server(database_url)
    for nick in ("zp", "jpleal"):
        assert server.call("register", nick=nick, password="secret") == (200, {})
        _, body = server.call("join", nick=nick, password="secret", group=1, size=9)
    # A game whose stored state is broken (as after a bad manual edit): the request fails inside the server.
    query(database_url, "UPDATE games_game SET state = '{\"broken\": true}' WHERE public_id = %s", (body["game"],))
    response = server.http.post("/roll", json={"nick": "zp", "password": "secret", "game": body["game"]})
    assert (response.status_code, response.json()) == (500, {"error": "Internal server error"})
    assert response.headers["content-type"] == "application/json"
    assert "Traceback" in server.log.read_text()  # the log keeps it, for whoever runs the server


# Run in the scripts below: whether a large block that glibc's default threshold would give its own mapping comes from
# the heap (the threshold moved) after a larger one was freed. A free stretch of the heap serves a block whatever the
# threshold, so the heap's free top is given back first and the block is larger than anything a start-up frees.
LARGE_BLOCK_FROM_HEAP = """
import ctypes

def large_block_from_heap():
    libc = ctypes.CDLL(None)
    libc.malloc.restype = ctypes.c_void_p
    libc.free.argtypes = [ctypes.c_void_p]
    libc.free(libc.malloc(8 << 20))  # above the threshold: its own mapping, and once freed, the threshold moves up
    libc.malloc_trim(0)
    block = libc.malloc(4 << 20)
    with open("/proc/self/maps") as maps:
        heap = [line.split()[0] for line in maps if line.rstrip().endswith("[heap]")]
    libc.free(block)
    start, end = (int(bound, 16) for bound in heap[0].split("-")) if heap else (0, 0)
    return start <= block < end
"""


def test_the_interpreter_is_tuned_by_the_servers_start_up_not_by_an_import(tmp_path):
    script = (
        LARGE_BLOCK_FROM_HEAP
        + """
import asyncio, gc, json, sys
defaults = [list(gc.get_threshold()), sys.getswitchinterval()]
moving = large_block_from_heap()
import tabsite.asgi as asgi
imported = [list(gc.get_threshold()), sys.getswitchinterval()]

async def start():
    messages = iter([{"type": "lifespan.startup"}, {"type": "lifespan.shutdown"}])
    sent = []

    async def receive():
        return next(messages)

    async def send(message):
        sent.append(message["type"])

    await asgi.application({"type": "lifespan"}, receive, send)
    return sent

sent = asyncio.run(start())
started = [list(gc.get_threshold()), sys.getswitchinterval()]
print(json.dumps([defaults, imported, started, sent, moving, large_block_from_heap()]))
"""
    )
    env = {**os.environ, "TAB_VAR_DIR": str(tmp_path), "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}"}
    env["DRAUGHTS_PORT"] = str(free_port())
    env["FISH_PORT"] = str(free_port())
    env.pop("REDIS_URL", None)
    env.pop("MALLOC_MMAP_THRESHOLD_", None)  # set, it would decide the threshold
    result = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    defaults, imported, started, sent, moving, moved = json.loads(result.stdout.strip().splitlines()[-1])
    assert imported == defaults
    assert started == [list(interpreter.GC_THRESHOLDS), interpreter.SWITCH_INTERVAL] != defaults
    assert sent == ["lifespan.startup.complete", "lifespan.shutdown.complete"]
    # glibc's threshold moved by itself before start-up, and stays fixed after it.
    if platform.libc_ver()[0] == "glibc":
        assert (moving, moved) == (True, False)


def test_the_sqlite_database_is_readable_by_its_owner_alone(tmp_path):
    # A database made before this rule, readable by all: it is closed to others at the next start.
    (tmp_path / "db.sqlite3").touch(mode=0o644)
    env = {key: value for key, value in os.environ.items() if key != "DATABASE_URL"}
    result = subprocess.run(
        [sys.executable, "manage.py", "migrate", "--noinput", "--verbosity", "0"],
        cwd=ROOT,
        env={**env, "TAB_VAR_DIR": str(tmp_path)},
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "db.sqlite3").stat().st_mode & 0o777 == 0o600
    fresh = tmp_path / "fresh"
    subprocess.run([sys.executable, "manage.py", "check"], cwd=ROOT, env={**env, "TAB_VAR_DIR": str(fresh)}, check=True)
    assert (fresh / "db.sqlite3").stat().st_mode & 0o777 == 0o600
