"""The positions of the games this process changed last, kept decoded between their actions.

Every action reads its game's row and decodes the position twice: the stored JSON text into a value, then that value
into the rules' state (BENCHMARKS.md has what that costs). The process that made a game's latest change has both at
hand: once its change is committed, it keeps them for the game's next action, which takes them only if the stored
text is still the very text it wrote. Any other writer (another process, the admin, a transaction undone) leaves a
different text, and the action decodes the row as before.

Taking removes: one action at a time owns a rules state (the rules change it in place), and an action whose
transaction is undone leaves nothing behind. Reads of the API that poll (a Fish player's state, a Plakoto table's
status) peek instead: they decode nothing when the position is the one kept, and change nothing of it; the action
after them changes a copy of the state they had. What is kept is what the transaction's last change wrote:
the services write a game's position from its rules' state after every change of that state (games/services.py,
`_record`). The text compared is what this process wrote, so a database that rewrites JSON (PostgreSQL's jsonb) never
matches, and there nothing is kept.
"""

import threading
from typing import Any

from django.db import transaction

# How many games' positions a process keeps (the latest it changed): a Tâb position is about 7 KB decoded.
KEPT = 10_000

# public id -> (stored text, its JSON value, the rules' state, whether a read has it: then no action may change it)
_kept: dict[str, tuple[str, Any, object, bool]] = {}
# Reads and actions run in several threads (the database thread, the web transports' worker threads): a state is
# handed to readers or to one action, never to both, under this lock.
_lock = threading.Lock()


def keep_on_commit(public_id: str, text: str, value: Any, state: object) -> None:
    """Once the current transaction commits, keep the game's position as stored (`text`), its JSON value and the
    rules' state it was made from; a later change of the same transaction replaces it."""
    transaction.on_commit(lambda: _keep(public_id, text, value, state))


def _keep(public_id: str, text: str, value: Any, state: object) -> None:
    with _lock:
        if public_id not in _kept and len(_kept) >= KEPT:
            del _kept[next(iter(_kept))]  # the oldest
        _kept[public_id] = (text, value, state, False)


def peek(public_id: str, text: object) -> tuple[Any, object] | None:
    """Return the JSON value and rules state kept for the game if `text`, the position now stored, is the one kept,
    leaving them kept, for reads only, which must change neither: from then on the game's next action changes a copy
    of that state (a read in another thread may still be using this one)."""
    with _lock:
        entry = _kept.get(public_id)
        if entry is None or entry[0] != text:
            return None
        if not entry[3]:
            _kept[public_id] = (*entry[:3], True)
    return entry[1], entry[2]


def take(public_id: str, text: object) -> tuple[Any, object, bool] | None:
    """Return the JSON value and rules state kept for the game if `text`, the position now stored, is the one kept,
    and whether reads have that state (then the action changes a copy of its own: a read in another thread may still be
    using it); the game's entry is gone either way."""
    with _lock:
        entry = _kept.pop(public_id, None)
    if entry is None or entry[0] != text:
        return None
    return entry[1], entry[2], entry[3]
