"""Settings for Tâb Online, read from the environment.

The defaults suit one laptop: SQLite under var/, events inside one process, DEBUG off.
DATABASE_URL moves the data to PostgreSQL and REDIS_URL carries events and caches between processes.
"""

import os
import secrets
import time
from pathlib import Path
from urllib.parse import unquote, urlsplit

import dj_database_url
from django.core.exceptions import ImproperlyConfigured
from django.utils.csp import CSP

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(os.environ.get("TAB_VAR_DIR", BASE_DIR / "var"))
VAR_DIR.mkdir(parents=True, exist_ok=True)


def env_bool(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    if value.lower() in ("1", "true", "yes", "on"):
        return True
    if value.lower() in ("0", "false", "no", "off"):
        return False
    raise ImproperlyConfigured(f"{name} must be a boolean (1/0, true/false), not {value!r}")


def env_int(name: str, default: int, minimum: int = 0) -> int:
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    try:
        number = int(value)
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be an integer, not {value!r}") from None
    if number < minimum:
        raise ImproperlyConfigured(f"{name} must be at least {minimum}, not {number}")
    return number


def env_seconds(name: str, default: float) -> float:
    """Return a duration in seconds: a positive number, decimals allowed."""
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    try:
        number = float(value)
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be a number of seconds, not {value!r}") from None
    if not 0 < number < 10**7:
        raise ImproperlyConfigured(f"{name} must be a positive number of seconds, not {value!r}")
    return number


def env_list(name: str, default: list[str]) -> list[str]:
    value = os.environ.get(name)
    if value is None or value.strip() == "":
        return default
    return [item.strip() for item in value.split(",") if item.strip()]


def secret_key() -> str:
    """Return SECRET_KEY from the environment, or the one generated once and kept under var/."""
    if os.environ.get("SECRET_KEY"):
        return os.environ["SECRET_KEY"]
    path = VAR_DIR / "secret_key"
    if not path.exists():
        # O_EXCL: when several workers start at once, exactly one writes the key and the others read it.
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            pass
        else:
            with os.fdopen(fd, "w") as file:
                file.write(secrets.token_urlsafe(50))
    for _ in range(100):
        key = path.read_text().strip()
        if key:
            return key
        time.sleep(0.01)
    raise ImproperlyConfigured(f"{path} is empty: delete it or set SECRET_KEY")


SECRET_KEY = secret_key()
DEBUG = env_bool("DEBUG", False)
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["127.0.0.1", "localhost", "[::1]", "testserver"])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])
# The site's own calls (JSON) get their CSRF refusal as JSON.
CSRF_FAILURE_VIEW = "accounts.views.csrf_failure"

# Deployment behind a reverse proxy that terminates HTTPS (see the README's "Operating" section).
# TRUSTED_PROXIES: how many proxies stand in front of the server; only then are their X-Forwarded-For (the
# client's address, for the limits) and X-Forwarded-Proto headers believed. A client can write those headers too.
TRUSTED_PROXIES = env_int("TRUSTED_PROXIES", 0)
if TRUSTED_PROXIES:
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
# HTTPS: the site is served over HTTPS only: redirect plain HTTP, secure cookies, Strict-Transport-Security.
HTTPS = env_bool("HTTPS", False)
SECURE_SSL_REDIRECT = HTTPS
SESSION_COOKIE_SECURE = CSRF_COOKIE_SECURE = HTTPS
SECURE_HSTS_SECONDS = env_int("HSTS_SECONDS", 31_536_000 if HTTPS else 0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("HSTS_INCLUDE_SUBDOMAINS", HTTPS)
SECURE_HSTS_PRELOAD = env_bool("HSTS_PRELOAD", False)

# Request bodies: the API's are a few hundred bytes; anything much larger is refused (413) before it is parsed.
TAB_MAX_BODY_BYTES = env_int("TAB_MAX_BODY_BYTES", 64 * 1024, minimum=1024)
DATA_UPLOAD_MAX_MEMORY_SIZE = TAB_MAX_BODY_BYTES
# A request's headers must arrive within this many seconds of its first byte (of the connection, for the first), and
# its body within as many after them: a client sending a byte at a time holds a connection for no longer.
TAB_HEADER_TIMEOUT = env_int("TAB_HEADER_TIMEOUT_SECONDS", 10, minimum=1)
TAB_BODY_TIMEOUT = env_int("TAB_BODY_TIMEOUT_SECONDS", 10, minimum=1)
# Connections one server process holds at once; past it a new one is answered 503 with Retry-After and closed.
# 0: as many as the process's open-files limit allows, less a reserve (core/server.py).
TAB_MAX_CONNECTIONS = env_int("TAB_MAX_CONNECTIONS", 0)
# Spectators' streams (/games/<id>/stream) one server process serves at once from one address, and of one game.
TAB_SPECTATORS_PER_ADDRESS = env_int("TAB_SPECTATORS_PER_ADDRESS", 20)
TAB_SPECTATORS_PER_GAME = env_int("TAB_SPECTATORS_PER_GAME", 500)

INSTALLED_APPS = [
    "tabsite.apps.TabAdminConfig",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django_eventstream",
    "accounts",
    "games",
    "rankings",
    "protocols.course_api",
    "protocols.draughts",
    "protocols.plakoto",
    "protocols.fish",
]

MIDDLEWARE = [
    "core.health.HealthCheckMiddleware",
    "core.middleware.ApiCorsMiddleware",
    "core.middleware.ClientAddressMiddleware",
    "core.middleware.RefusalMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "servestatic.middleware.ServeStaticMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django.middleware.csp.ContentSecurityPolicyMiddleware",
]

# The pages load their scripts, styles and data from this site only, and run no inline script.
SECURE_CSP = {
    "default-src": [CSP.SELF],
    "img-src": [CSP.SELF, "data:"],
    "object-src": [CSP.NONE],
    "base-uri": [CSP.NONE],
    "form-action": [CSP.SELF],
    "frame-ancestors": [CSP.NONE],
}

ROOT_URLCONF = "tabsite.urls"
ASGI_APPLICATION = "tabsite.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

# Database: SQLite under var/ unless DATABASE_URL says otherwise.
DATABASE_URL = os.environ.get("DATABASE_URL") or f"sqlite:///{VAR_DIR / 'db.sqlite3'}"
# The API's database work runs in one thread per process (core/dbthread.py), which keeps its connection open;
# health checks replace a connection that a database restart broke before a request uses it.
try:
    DATABASES = {
        "default": dj_database_url.parse(
            DATABASE_URL, conn_max_age=env_int("CONN_MAX_AGE", 600), conn_health_checks=True
        )
    }
except ValueError as error:
    raise ImproperlyConfigured(f"DATABASE_URL is not a database URL: {error}") from None
SQLITE = DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3"
if SQLITE:
    DATABASES["default"]["OPTIONS"] = {
        # IMMEDIATE: a transaction takes the write lock when it begins, so two writers queue on the busy timeout
        # instead of one failing with "database is locked" when it upgrades a read lock.
        "transaction_mode": "IMMEDIATE",
        "timeout": 20,
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
    }
    # The file holds the password hashes: its owner's alone, as the secret key is (SQLite gives its journal files
    # the database file's permissions).
    _sqlite = Path(DATABASES["default"]["NAME"])
    if str(_sqlite) != ":memory:":
        _sqlite.parent.mkdir(parents=True, exist_ok=True)
        os.close(os.open(_sqlite, os.O_WRONLY | os.O_CREAT, 0o600))
        os.chmod(_sqlite, 0o600)
    # Tests that run requests in threads need a real file, not an in-memory database. One test database per
    # test run (by process id), on either engine, so that two runs on one machine never share one.
    DATABASES["default"]["TEST"] = {"NAME": str(VAR_DIR / f"test-db-{os.getpid()}.sqlite3")}
else:
    DATABASES["default"]["TEST"] = {"NAME": f"test_{DATABASES['default']['NAME']}_{os.getpid()}"}
    if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
        # The values travel apart from the statement, which PostgreSQL prepares once per connection after a few runs:
        # Django's default binding writes every value into the statement's text in Python, a fifth of an action's
        # database work, and PostgreSQL then parses and plans each statement again (BENCHMARKS.md). Prepared
        # statements do not survive a pooler in transaction mode (PgBouncer): PG_PREPARE_THRESHOLD=0 turns them off.
        DATABASES["default"].setdefault("OPTIONS", {}).update(
            server_side_binding=True, prepare_threshold=env_int("PG_PREPARE_THRESHOLD", 5) or None
        )

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# Redis: events between server processes and a shared cache.
REDIS_URL = os.environ.get("REDIS_URL", "")

# Where a server process runs the database calls of the API and the line protocols: "loop", on the event loop between
# its turns (SQLite only: a statement there takes microseconds and waits for no network), or "thread", in a thread of
# their own (the database's round trips and the loop's work overlap): core/dbthread.py. The loop by default with SQLite
# in one process (no REDIS_URL, so one worker): less CPU a call and half the waits (BENCHMARKS.md). Several processes
# on one SQLite file take turns at its write lock, and on the loop one waiting for it would stall its connections.
TAB_DATABASE_CALLS = os.environ.get("TAB_DATABASE_CALLS", "loop" if SQLITE and not REDIS_URL else "thread")
if TAB_DATABASE_CALLS not in ("loop", "thread"):
    raise ImproperlyConfigured(f"TAB_DATABASE_CALLS must be loop or thread, not {TAB_DATABASE_CALLS!r}")
if TAB_DATABASE_CALLS == "loop" and not SQLITE:
    raise ImproperlyConfigured("TAB_DATABASE_CALLS=loop is for SQLite: a database's round trips would stall the loop")
# Under load (the last batch had company), a batch of database calls begins at most every this many milliseconds: a
# call coming sooner after the last batch began waits for the calls that follow it (one transaction for several
# actions); a call on a quiet server, or a client's calls one after another, run at once. 0: on the loop, every turn
# runs the calls made in the turn before; in the thread, a batch takes the calls waiting when it begins. Longer in the
# thread: there a batch costs round trips to the database (and to Redis), on the loop only SQLite's begin and commit
# (BENCHMARKS.md).
TAB_BATCH_GATHER_MS = env_int("TAB_BATCH_GATHER_MS", 4 if TAB_DATABASE_CALLS == "loop" else 10)
# In the thread, under load, a batch with fewer calls than core.dbthread.BATCH_ENOUGH when its window ends waits for
# them up to this many milliseconds after the last batch began: paced by its size as well as by the clock, so that each
# of several workers, with a part of the load, runs batches as large as one would with all of it (BENCHMARKS.md).
TAB_BATCH_GATHER_MAX_MS = env_int("TAB_BATCH_GATHER_MAX_MS", 2 * TAB_BATCH_GATHER_MS)
if TAB_BATCH_GATHER_MAX_MS < TAB_BATCH_GATHER_MS:
    raise ImproperlyConfigured("TAB_BATCH_GATHER_MAX_MS must be at least TAB_BATCH_GATHER_MS")


def redis_connection(url: str) -> dict[str, object]:
    """Return redis.Redis keyword arguments for a redis:// URL."""
    parts = urlsplit(url)
    if parts.scheme not in ("redis", "rediss"):
        raise ImproperlyConfigured(f"REDIS_URL must start with redis:// or rediss://, not {url!r}")
    try:
        db = int(parts.path.lstrip("/") or 0)
        port = parts.port or 6379
    except ValueError:
        raise ImproperlyConfigured(f"REDIS_URL is not a valid Redis URL: {url!r}") from None
    connection: dict[str, object] = {"host": parts.hostname or "127.0.0.1", "port": port, "db": db}
    if parts.username:
        connection["username"] = unquote(parts.username)
    if parts.password:
        connection["password"] = unquote(parts.password)
    if parts.scheme == "rediss":
        connection["ssl"] = True
    return connection


if REDIS_URL:
    from redis.backoff import ExponentialBackoff
    from redis.retry import Retry

    # Bounded waits: a Redis server that is down or unreachable must fail fast (then the update goes to this process's
    # streams, games/publication.py), never hang a request; two quick retries ride out a dropped connection.
    EVENTSTREAM_REDIS = {
        **redis_connection(REDIS_URL),
        "socket_connect_timeout": 2,
        "socket_timeout": 5,
        "retry": Retry(ExponentialBackoff(cap=0.2, base=0.05), 2),
    }
    # django-redis rather than Django's own backend for IGNORE_EXCEPTIONS: without Redis, the cache misses (and logs
    # why) instead of failing every request, so one process goes on serving its players.
    CACHES = {
        "default": {
            "BACKEND": "django_redis.cache.RedisCache",
            "LOCATION": REDIS_URL,
            "OPTIONS": {"IGNORE_EXCEPTIONS": True, "SOCKET_CONNECT_TIMEOUT": 1, "SOCKET_TIMEOUT": 1},
        }
    }
    DJANGO_REDIS_LOG_IGNORED_EXCEPTIONS = True
    DJANGO_REDIS_LOGGER = "core.cache"
else:
    # Room for every active player's verified credentials: a full cache evicts them, and each eviction costs a hash.
    CACHES = {
        "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "OPTIONS": {"MAX_ENTRIES": 200_000}}
    }

AUTH_PASSWORD_VALIDATORS: list[dict[str, str]] = []
# The admin's sign-in counts its hashes in the address's budget and runs them through the hashing gate, as the API.
AUTHENTICATION_BACKENDS = ["accounts.backends.GatedModelBackend"]
# Argon2 first, as Django's documentation recommends: with Django's parameters a check costs about half the CPU of
# PBKDF2's 1.5 million iterations (BENCHMARKS.md); memory-hard, it resists guessing on graphics cards where PBKDF2 does
# not. At most
# TAB_HASHING_THREADS hashes run at once, so the memory stays bounded. The others still check the hashes made before,
# which are replaced by Argon2 ones at the next right password.
PASSWORD_HASHERS = [
    "django.contrib.auth.hashers.Argon2PasswordHasher",
    "django.contrib.auth.hashers.PBKDF2PasswordHasher",
    "django.contrib.auth.hashers.PBKDF2SHA1PasswordHasher",
    "django.contrib.auth.hashers.ScryptPasswordHasher",
]
if os.environ.get("PASSWORD_HASHERS"):
    # Only for test servers, which may trade hashing cost for speed.
    PASSWORD_HASHERS = env_list("PASSWORD_HASHERS", [])

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = VAR_DIR / "staticfiles"
STATIC_ROOT.mkdir(exist_ok=True)
# Serve straight from the source folders: no collectstatic step to forget after an update.
SERVESTATIC_USE_FINDERS = True

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"}},
    # An outage fails every request: one line a minute per source says so without flooding the log.
    "filters": {
        "cache_outage": {"()": "core.logfilters.OncePerMinute"},
        "sweep_outage": {"()": "core.logfilters.OncePerMinute"},
        "database_outage": {"()": "core.logfilters.OncePerMinute"},
    },
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "INFO")},
    "loggers": {
        "django_eventstream": {"level": "WARNING"},
        "core.cache": {"filters": ["cache_outage"]},
        "games.sweeper": {"filters": ["sweep_outage"]},
        "core.middleware": {"filters": ["database_outage"]},
    },
}

# The game.
TAB_TURN_TIMEOUT = env_int("TAB_TURN_TIMEOUT", 120, minimum=1)
# How long the computer's strongest level thinks about a move (never past the turn's deadline).
COMPUTER_THINK_MS = env_int("COMPUTER_THINK_MS", 1000)
# The analysis of a finished game (games/analysis.py), made in a background process of lower priority: at most this
# many positions looked at, and this many seconds, a game.
ANALYSIS_POSITIONS = env_int("ANALYSIS_POSITIONS", 200_000, minimum=1)
ANALYSIS_SECONDS = env_seconds("ANALYSIS_SECONDS", 30.0)
# How often each server process looks for games whose deadline has passed.
TAB_SWEEP_INTERVAL = env_int("TAB_SWEEP_INTERVAL_MS", 500, minimum=10) / 1000
# When no server has swept for longer than this (every process down, or the database unreachable), the deadlines
# still ahead when the last sweep ran are pushed back by the whole gap: our outage costs no player a turn.
TAB_OUTAGE_GRACE = env_int("TAB_OUTAGE_GRACE_SECONDS", 10, minimum=1)
# Comment lines keep idle streams open through proxies that drop silent connections.
TAB_KEEPALIVE_SECONDS = env_int("TAB_KEEPALIVE_SECONDS", 20, minimum=1)
# How long a verified nick + password pair is trusted before the password hash is checked again.
TAB_CREDENTIALS_TTL = env_int("TAB_CREDENTIALS_TTL", 300)

# Limits on abuse (core/limits.py), shared between processes through the cache; 0 turns a limit off.
# Wrong passwords for one nick from one address within a minute, before further attempts get 429.
TAB_LOGIN_FAILURES_PER_MINUTE = env_int("TAB_LOGIN_FAILURES_PER_MINUTE", 10)
# Requests per client address and minute. Generous: a classroom behind one address registers and joins together.
TAB_REGISTER_PER_MINUTE = env_int("TAB_REGISTER_PER_MINUTE", 300)
TAB_JOIN_PER_MINUTE = env_int("TAB_JOIN_PER_MINUTE", 1200)
# Update streams open at once for one nick (a player has one per game; a few tabs are fine).
TAB_STREAMS_PER_NICK = env_int("TAB_STREAMS_PER_NICK", 10)
# Password hashes: at most this many per client address and minute, on this many threads, with this many more
# waiting at most (accounts/hashing.py): 32 is about two seconds of Argon2's work on two cores, room for a
# classroom logging in at once.
TAB_HASHES_PER_MINUTE = env_int("TAB_HASHES_PER_MINUTE", 60)
TAB_HASHING_THREADS = env_int("TAB_HASHING_THREADS", os.cpu_count() or 1, minimum=1)
TAB_HASHING_QUEUE = env_int("TAB_HASHING_QUEUE", 32)

# The draughts room server (protocols/draughts): a line protocol over TLS beside the web server, on the same HOST.
DRAUGHTS_HOST = os.environ.get("HOST", "127.0.0.1")
DRAUGHTS_PORT = env_int("DRAUGHTS_PORT", 8009, minimum=1)
# Each player's time for the whole game, in milliseconds (ten minutes).
DRAUGHTS_CLOCK_MS = env_int("DRAUGHTS_CLOCK_MS", 600_000, minimum=1)


def draughts_tls() -> tuple[Path, Path]:
    """Return the certificate and key the draughts server speaks TLS with: the PEM files DRAUGHTS_TLS_CERT and
    DRAUGHTS_TLS_KEY name, checked now (a bad one stops the server before it starts), or the self-signed pair made
    once under var/ when neither is set."""
    certificate, key = os.environ.get("DRAUGHTS_TLS_CERT", ""), os.environ.get("DRAUGHTS_TLS_KEY", "")
    if not certificate and not key:
        return VAR_DIR / "draughts_tls_cert.pem", VAR_DIR / "draughts_tls_key.pem"
    if not certificate or not key:
        missing = "DRAUGHTS_TLS_CERT" if not certificate else "DRAUGHTS_TLS_KEY"
        raise ImproperlyConfigured(
            f"{missing} must be set too: give both DRAUGHTS_TLS_CERT and DRAUGHTS_TLS_KEY, or none"
        )
    from cryptography import x509
    from cryptography.hazmat.primitives import serialization

    for name, path, load in (
        ("DRAUGHTS_TLS_CERT", certificate, x509.load_pem_x509_certificates),
        ("DRAUGHTS_TLS_KEY", key, lambda data: serialization.load_pem_private_key(data, password=None)),
    ):
        try:
            load(Path(path).read_bytes())
        except OSError as error:
            raise ImproperlyConfigured(f"{name}: cannot read {path}: {error.strerror}") from None
        except (ValueError, TypeError) as error:
            what = "PEM certificates" if name == "DRAUGHTS_TLS_CERT" else "an unencrypted PEM private key"
            raise ImproperlyConfigured(f"{name}: {path} does not hold {what} ({error})") from None
    import ssl

    try:
        ssl.create_default_context(ssl.Purpose.CLIENT_AUTH).load_cert_chain(certificate, key)
    except ssl.SSLError as error:
        raise ImproperlyConfigured(
            f"DRAUGHTS_TLS_KEY: {key} is not the key of the certificate in DRAUGHTS_TLS_CERT ({error})"
        ) from None
    return Path(certificate), Path(key)


DRAUGHTS_TLS_CERT, DRAUGHTS_TLS_KEY = draughts_tls()

# The Plakoto REST API (protocols/plakoto): the seconds a player on turn has for each move before losing.
PLAKOTO_TURN_TIMEOUT = env_int("PLAKOTO_TURN_TIMEOUT", 300, minimum=1)

# The Fish player protocol (protocols/fish): newline-delimited JSON over plain TCP, on the web site's address, and the
# seconds a player on turn has to place or move before the server removes it from the game.
FISH_HOST = os.environ.get("HOST", "127.0.0.1")
FISH_PORT = env_int("FISH_PORT", 45678, minimum=1)
FISH_TURN_TIMEOUT = env_seconds("FISH_TURN_TIMEOUT", 60.0)
