"""Notices: what one server process tells every other, and whether this process hears them all now.

Some of what a process keeps in memory holds only until another process says otherwise: a remembered pair of
credentials until it is forgotten anywhere (a changed password, accounts/credentials.py), a nick's clean record of
wrong passwords until one is given anywhere (core/limits.py). With events through Redis (REDIS_URL), such a word is a
notice: `tell(kind, text)` sends it to every process, on the channel of the matches' updates (games/publication.py,
which hands each notice that comes to `deliver`), and each process gives it to the handler of its kind (`on_notice`).

A process may believe such memory instead of asking Redis only while it hears every notice: from the moment its
listener's subscription is confirmed (`heard`) until the listener finds its connection lost (`deaf`: at once when
Redis closes it, within TCP keep-alive's time when it dies silently). Each time it begins to hear again is a new
`epoch`: what was learned in an earlier one may have been told otherwise meanwhile, unheard. A notice that cannot be
sent (Redis unreachable from the teller alone) is lost, and logged; its teller's own memory is changed by its caller
directly.

Handlers run on the event loop of the process's listener: they must be quick, must not raise, and may share what
they change with other threads only under the GIL's atomic operations or a lock of their own.
"""

import logging
import time
from collections.abc import Callable

logger = logging.getLogger(__name__)

# The channel of a notice of `kind` is PREFIX + kind: no match's channel begins so (those are "game-…").
PREFIX = "notice:"

_handlers: dict[str, Callable[[str], None]] = {}
# How notices leave this process: set by the publication when events go through Redis (`send_with`).
_sender: Callable[[str, str], None] | None = None
# While the listener hears every notice: the epoch of that hearing and the wall-clock time it began (one object, read
# at once by other threads); None while it does not.
_hearing: tuple[int, float] | None = None
_epochs = 0


def on_notice(kind: str, handler: Callable[[str], None]) -> None:
    """Have `handler(text)` called for every notice of `kind` this process hears, its own included."""
    _handlers[kind] = handler


def send_with(sender: Callable[[str, str], None] | None) -> None:
    """Send notices with `sender(channel, text)` from now on (None: no other process to tell)."""
    global _sender
    _sender = sender


def tell(kind: str, text: str) -> None:
    """Tell every server process (this one too, through Redis) a notice of `kind`; nothing without other processes."""
    if _sender is not None:
        _sender(PREFIX + kind, text)


def deliver(channel: object, text: object) -> bool:
    """Give a notice that came to its handler; return whether `channel` is a notice's (no match's update)."""
    if not isinstance(channel, str) or not channel.startswith(PREFIX):
        return False
    if not isinstance(text, str):
        return True  # a notice's channel, but no notice: dropped
    handler = _handlers.get(channel[len(PREFIX) :])
    if handler is not None:
        try:
            handler(text)
        except Exception:  # one bad notice must not silence the listener
            logger.exception("a notice on %s could not be handled", channel)
    return True


def heard() -> None:
    """The listener's subscription is confirmed: from now on this process hears every notice, in a new epoch."""
    global _hearing, _epochs
    _epochs += 1
    _hearing = (_epochs, time.time())


def deaf() -> None:
    """The listener lost its connection: notices told from now on are not heard here."""
    global _hearing
    _hearing = None


def hearing() -> tuple[int, float] | None:
    """The epoch of this process's hearing and since when (wall-clock seconds), or None while it does not hear."""
    return _hearing


def epoch() -> int | None:
    """The epoch of this process's hearing, or None while it does not hear every notice."""
    hearing = _hearing
    return None if hearing is None else hearing[0]
