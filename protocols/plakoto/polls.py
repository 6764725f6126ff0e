"""The answers of `GET status/` kept in memory (games/kept.py), so that a poll is answered on the event loop, with no
trip to the database thread.

Clients of this API poll a table's status several times a second each, and most polls find it as it was. An answer
read from the database is kept for its table, and the next polls get it, until the table or its game changes: every
change of either is published (a table's own changes with `announce_on_commit`, its game's with `publish_on_commit`:
the same events that wake the table's stream), which drops it. A poll notes where the count of changes stood when it
arrived (`since`), before its read began, so that an answer read while a change was being committed is not kept. A move
knows the status it leaves (the API's busiest change: both players poll next), and keeps it once committed
(`keep_on_commit`).

Answers are kept only where the server is the site's one process (no REDIS_URL); a change made by hand outside the
server is seen once the kept answer is `LIFETIME` old.
"""

from games.kept import LIFETIME, Kept, kept_in_this_process

__all__ = ["LIFETIME", "Polls", "install", "polls"]

# Kept answers by table, each a status's text.
Polls = Kept[bytes]

# This process's kept answers, or None when other processes change the tables too.
polls: Polls | None = None


def install() -> None:
    """Keep answers in this process if it is the site's only server process (no REDIS_URL), and hear of every change."""
    global polls
    from games import publication

    if not kept_in_this_process() or polls is not None:
        return
    polls = Polls()
    publication.observe_changes(_changed)


def _changed(channel: str) -> None:
    if polls is not None:
        polls.changed(channel)
