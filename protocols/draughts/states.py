"""What GET_STATE reads of a room, kept in memory (games/kept.py), so that a client polling its room is answered on
the event loop, with no trip to the database thread.

A room's read (`services.RoomRead`) is kept for its room until the room or its game changes: every change of its game
is published (which drops it), and every change of who is in the room or holds a colour drops it too, once committed
(`room_changed`; `rooms_changed`, the holds of a process cleared all at once, when it stops or after it is gone). What
depends on the time it is asked, the clock running and whether each hold still counts, is worked out from the kept read
at each GET_STATE; a clock that has run out is the database's to end, and that GET_STATE reads its room again. The
renewal of this process's holds every few seconds writes one time into all of them: it drops nothing, and a hold of
this process counts until the latest renewal's time if a read has an earlier one (`renewed_until`), as the database
has it.

Kept only where the server is the site's one process (no REDIS_URL).
"""

import uuid
from datetime import datetime

from django.db import transaction

from games.kept import Kept, kept_in_this_process

# Rooms whose reads are kept at most (the oldest kept goes first): about 600 bytes each.
ROOMS = 20_000

# This process's kept reads (`services.RoomRead`, by `channel(room)`), or None when other processes change the rooms.
kept: Kept | None = None


def channel(room_id: uuid.UUID) -> str:
    """The name a room's own changes go by: the key of its kept read, and one of the channels it depends on."""
    return f"draughts-room-{room_id}"


def install() -> None:
    """Keep reads in this process if it is the site's only server process (no REDIS_URL), and hear of every change."""
    global kept
    from games import publication

    if not kept_in_this_process() or kept is not None:
        return
    kept = Kept(keys=ROOMS)
    publication.observe_changes(_changed)


def _changed(name: str) -> None:
    if kept is not None:
        kept.changed(name)


def room_changed(room_id: uuid.UUID) -> None:
    """Who is in the room, or holds one of its colours, changes with the current transaction."""
    if kept is not None:
        kept.changed_on_commit(channel(room_id))


# Until when this process's latest renewal of its holds has them held (presence.holds_renew), once committed: a hold
# of the process's that a read made before it shows as held until earlier is held until then.
renewed_until: datetime | None = None


def holds_renewed(until: datetime) -> None:
    """Every hold of this process is held until `until` with the current transaction."""

    def renewed() -> None:
        global renewed_until
        renewed_until = until  # renewals are made one after another, in the process's database calls

    transaction.on_commit(renewed)


def rooms_changed() -> None:
    """Who holds the colours of many rooms changes with the current transaction."""
    if kept is not None:
        transaction.on_commit(kept.changed_everywhere)
