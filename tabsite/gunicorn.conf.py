"""gunicorn settings for `make run`: ASGI through uvicorn workers, since the update streams need them."""

import os
import subprocess
import sys
from pathlib import Path

bind = f"{os.environ.get('HOST', '127.0.0.1')}:{os.environ.get('PORT', '8008')}"
worker_class = "core.server.Worker"

# Streams of one game may be held by different workers: only a shared event channel (Redis) joins them.
_default_workers = (os.cpu_count() or 1) if os.environ.get("REDIS_URL") else 1
workers = int(os.environ.get("WEB_CONCURRENCY", _default_workers))
if workers > 1 and not os.environ.get("REDIS_URL"):
    sys.exit(
        f"WEB_CONCURRENCY={workers} needs REDIS_URL: without a shared event channel, a player whose stream is "
        "held by another worker would miss updates. Set REDIS_URL, or run one worker."
    )

# The client's address is the connection's: the application alone reads X-Forwarded-For, and only as far as
# TRUSTED_PROXIES says (core/limits.py). uvicorn would otherwise believe the header from any local client.
forwarded_allow_ips = ""

# The control socket (gunicornc) of this server, in its own folder: two servers on one machine must not share one.
control_socket = str(
    Path(os.environ.get("TAB_VAR_DIR") or Path(__file__).resolve().parent.parent / "var") / "gunicorn.ctl"
)

# Update streams stay open for the whole game; workers must not be killed for being "silent".
timeout = 0
graceful_timeout = 10
keepalive = 75
accesslog = "-" if os.environ.get("ACCESS_LOG") else None
errorlog = "-"


# The analysis of finished games runs beside the server in one process of its own, at a lower priority, so that it
# never takes the CPU from the players (games/analysis.py). ANALYSIS=off leaves it out, for a deployment that runs
# `manage.py analyse --follow` elsewhere.
ANALYSIS_NICENESS = 10


def when_ready(server):
    if os.environ.get("ANALYSIS", "on") == "off":
        return
    manage = Path(__file__).resolve().parent.parent / "manage.py"
    server.analyser = subprocess.Popen(
        [sys.executable, str(manage), "analyse", "--follow"], preexec_fn=lambda: os.nice(ANALYSIS_NICENESS)
    )


def on_exit(server):
    analyser = getattr(server, "analyser", None)
    if analyser is not None:
        analyser.terminate()
        try:
            analyser.wait(10)
        except subprocess.TimeoutExpired:
            analyser.kill()
