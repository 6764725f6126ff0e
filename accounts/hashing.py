"""Password hashing, bounded: the one kind of work a stranger can make the server do for nothing (a wrong password
costs a full hash), so no one may queue more of it than the server can do promptly.

Hashes run on threads of their own, as many as the machine has cores (TAB_HASHING_THREADS), never in the database
thread or on the event loop. At most TAB_HASHING_QUEUE more may wait; past that a request is refused at once with 503
and Retry-After instead of waiting seconds behind the others. Each address also has a budget of hashes a minute
(TAB_HASHES_PER_MINUTE, core/limits.py): enough for a classroom behind one address, not for someone trying passwords
for many nicks. The admin's sign-in goes through the same gate and budget (accounts/backends.py).
"""

import asyncio
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from django.conf import settings

from core.errors import Refusal


class HashingBusy(Refusal):
    status = 503

    def __init__(self) -> None:
        super().__init__("The server is busy checking passwords: try again in a second", retry_after=1)


class HashingGate:
    """Run hashing functions on `threads` threads, with at most `waiting` more admitted to wait for one."""

    def __init__(self, threads: int, waiting: int):
        self.threads, self.capacity = threads, threads + waiting
        self.admitted = 0
        self.lock = threading.Lock()
        self.executor = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="password-hashing")

    def _release(self, _future: Any) -> None:
        with self.lock:
            self.admitted -= 1

    def _submit(self, function: Callable[..., Any], *args: Any) -> Future:
        with self.lock:
            if self.admitted >= self.capacity:
                raise HashingBusy
            self.admitted += 1
        future = self.executor.submit(function, *args)
        future.add_done_callback(self._release)
        return future

    async def run[R](self, function: Callable[..., R], *args: Any) -> R:
        return await asyncio.wrap_future(self._submit(function, *args))

    def call[R](self, function: Callable[..., R], *args: Any) -> R:
        """`run` for a caller in a thread of its own (a view of Django's usual handler): it waits for the result."""
        result: R = self._submit(function, *args).result()
        return result


_gate: HashingGate | None = None
_gate_lock = threading.Lock()


def gate() -> HashingGate:
    """Return this process's gate, made with the settings on first use (or again after they changed, in tests)."""
    global _gate
    threads, waiting = settings.TAB_HASHING_THREADS, settings.TAB_HASHING_QUEUE
    with _gate_lock:
        if _gate is None or (_gate.threads, _gate.capacity) != (threads, threads + waiting):
            _gate = HashingGate(threads, waiting)
        return _gate
