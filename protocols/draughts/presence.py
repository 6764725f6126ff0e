"""Who holds a colour right now: a live connection, in this server process or another.

Each server process has a name of its own, `PROCESS` (its host, process id and start time, which no later process
shares). A connection that holds a colour writes its token and that name into the room, with a time until which the
hold counts; the process renews its connections' holds every HOLD_RENEWED_EVERY, so that a process gone without a
word (kill -9, a lost machine) stops holding within HOLD_SECONDS. A process that starts clears at once the holds of
every process of its host that is no longer running: after a restart nobody is online, and every player may JOIN
again straight away.
"""

import os
import socket
import time
from datetime import datetime, timedelta

from django.db.models import Q
from django.utils import timezone

from . import states
from .models import Room

HOLD_SECONDS = 15
HOLD_RENEWED_EVERY = 5.0
COLOURS = ("white", "black")


def _started(pid: int) -> str | None:
    """Return when the process `pid` started (clock ticks since boot, Linux), or None if it is not running."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            # The command name (field 2) may hold spaces: the fields after its closing parenthesis are fixed.
            return stat.read().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return None


def _name() -> str:
    started = _started(os.getpid()) or f"{time.time_ns()}"
    return f"{socket.gethostname()}:{os.getpid()}:{started}"


PROCESS = _name()


def process_running(name: str) -> bool | None:
    """Return whether the server process `name` still runs, or None when that cannot be known from here (another
    host)."""
    parts = name.rsplit(":", 2)
    if len(parts) != 3:
        return False
    host, pid, started = parts
    if host != socket.gethostname() or not pid.isdigit():
        return None
    return _started(int(pid)) == started


def hold_until(now: datetime) -> datetime:
    return now + timedelta(seconds=HOLD_SECONDS)


def online(room: Room, colour: str, now: datetime) -> bool:
    """Return whether a live connection holds the colour ("white" or "black") of the room."""
    return held(getattr(room, f"{colour}_holder"), getattr(room, f"{colour}_held_until"), now)


def held(holder: str, until: datetime | None, now: datetime) -> bool:
    """Return whether a colour's hold (its holder, and until when) is a live connection's at `now`."""
    return bool(holder) and until is not None and until > now


def holds_renew() -> None:
    """Renew the holds of this process's connections."""
    until = hold_until(timezone.now())
    for colour in COLOURS:
        Room.objects.filter(**{f"{colour}_process": PROCESS}).update(**{f"{colour}_held_until": until})
    states.holds_renewed(until)


def holds_release(process: str) -> int:
    """Clear every hold of the connections of `process` (its connections are gone); return how many."""
    released = 0
    for colour in COLOURS:
        released += Room.objects.filter(**{f"{colour}_process": process}).update(
            **{f"{colour}_holder": "", f"{colour}_process": "", f"{colour}_held_until": None}
        )
    if released:
        states.rooms_changed()
    return released


def holds_of_the_departed() -> int:
    """Clear the holds of the processes of this host that no longer run (a restart, a crash); return how many."""
    processes: set[str] = set()
    for colour in COLOURS:
        field = f"{colour}_process"
        processes.update(Room.objects.filter(~Q(**{field: ""})).values_list(field, flat=True).distinct())
    return sum(
        holds_release(process) for process in processes if process != PROCESS and process_running(process) is False
    )
