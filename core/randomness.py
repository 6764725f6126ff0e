"""The operating system's secure randomness, read a few kilobytes at a time.

`random.SystemRandom` reads `os.urandom` for every number it gives, and each read gives up the GIL around the system
call. In the database thread of a server process (core/dbthread.py), where the dice and sticks of every action are
thrown, each give-up lets the event loop take the GIL, and the thread then waits for the loop to hand it back: until
the loop waits for its sockets, or up to the interpreter's switch interval (5 ms) when it is busy. A throw cost an
action a wait of that kind. `SecureRandom` gives the same numbers from the same source (the kernel's CSPRNG), read
`CHUNK` bytes at a time: one give-up every few hundred throws.

The bytes read ahead are this process's own: a child process made by fork() (gunicorn's workers) starts with none,
so that no two processes ever give the same numbers.
"""

import os
import random
import threading
import weakref

CHUNK = 4096
RECIP_BPF = 2.0**-random.BPF  # as random.SystemRandom's


class SecureRandom(random.SystemRandom):
    """random.SystemRandom, its bytes read ahead (the module's docstring says why); safe to share between threads."""

    def __init__(self, chunk: int = CHUNK) -> None:
        self._lock = threading.Lock()
        self._chunk = chunk
        self._pool = b""
        self._at = 0
        super().__init__()
        _instances.add(self)

    def _forget(self) -> None:
        """In a child process just made by fork(): nothing read ahead, and the lock free (another thread of the
        parent may have held it)."""
        self._lock = threading.Lock()
        self._pool, self._at = b"", 0

    def randbytes(self, n: int) -> bytes:
        if n < 0:
            raise ValueError("number of bytes must be non-negative")
        with self._lock:
            if self._at + n > len(self._pool):
                self._pool, self._at = os.urandom(max(n, self._chunk)), 0
            taken = self._pool[self._at : self._at + n]
            self._at += n
        return taken

    def random(self) -> float:
        return (int.from_bytes(self.randbytes(7)) >> 3) * RECIP_BPF

    def getrandbits(self, k: int) -> int:
        if k < 0:
            raise ValueError("number of bits must be non-negative")
        size = (k + 7) // 8
        return int.from_bytes(self.randbytes(size)) >> (size * 8 - k)


_instances: "weakref.WeakSet[SecureRandom]" = weakref.WeakSet()


def _forget_all() -> None:
    for instance in list(_instances):
        instance._forget()


os.register_at_fork(after_in_child=_forget_all)
