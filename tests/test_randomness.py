"""What the database thread computes for every action keeps the GIL (core/randomness.py says why): the dice and sticks'
randomness, read ahead, and the fingerprint of a remembered pair."""

import collections
import os
import sys
import threading
import time
from collections.abc import Callable

import pytest

from core import randomness
from core.randomness import SecureRandom


def gil_given_up(function: Callable[[], object], times: int = 500) -> int:
    """How many times another thread, waiting for the GIL, got it while `function` ran `times` times: with the switch
    interval out of reach, only a call that gives the GIL up lets it in. A give-up is not always caught (the caller may
    take the GIL back first); a call that keeps the GIL is never counted."""
    counted = [0]
    stop = threading.Event()

    def count() -> None:
        while not stop.is_set():
            counted[0] += 1
            time.sleep(0)  # gives the GIL back at once

    previous = sys.getswitchinterval()
    sys.setswitchinterval(100)
    thread = threading.Thread(target=count, daemon=True)
    thread.start()
    try:
        while counted[0] < 10:
            time.sleep(0.001)
        before = counted[0]
        for _ in range(times):
            function()
        return counted[0] - before
    finally:
        stop.set()
        thread.join()
        sys.setswitchinterval(previous)


def test_the_check_sees_a_call_that_gives_up_the_gil():
    # Reading the operating system's randomness gives it up every time: caught sooner or later.
    deadline = time.monotonic() + 60
    while not gil_given_up(lambda: os.urandom(8)):
        assert time.monotonic() < deadline, "a call that gives up the GIL was never caught"


def test_the_dice_keep_the_gil():
    rng = SecureRandom(chunk=1 << 20)  # all the calls below take from one read
    rng.getrandbits(4)  # the read
    assert gil_given_up(lambda: (rng.getrandbits(4), rng.randrange(6), rng.random())) == 0


def test_a_pairs_fingerprint_keeps_the_gil():
    from accounts import credentials

    assert gil_given_up(lambda: credentials._fingerprint("alice", "correct horse")) == 0


def test_the_fingerprint_and_the_key_are_hmac_sha256_as_before(settings):
    """Pairs remembered in the shared cache by an older process stay readable."""
    import hmac

    from accounts import credentials

    secret = settings.SECRET_KEY.encode()
    assert credentials._fingerprint("alice", "pw") == hmac.digest(secret, b"pair\0alice\0pw", "sha256").hex()
    key = hmac.digest(secret, b"nick\0alice", "sha256").hex()[:40]
    assert credentials.key_of("alice") == f"tab:credentials:{key}"


def test_the_randomness_is_read_a_chunk_at_a_time(monkeypatch):
    reads: list[int] = []
    urandom = os.urandom

    def counted(n: int) -> bytes:
        reads.append(n)
        return urandom(n)

    monkeypatch.setattr(randomness.os, "urandom", counted)
    rng = SecureRandom(chunk=1000)
    throws = [rng.getrandbits(4) for _ in range(2500)]  # a byte each
    assert reads == [1000, 1000, 1000]
    assert rng.randbytes(5000) and reads[-1] == 5000  # more than a chunk: read at once
    assert all(0 <= bits < 16 for bits in throws)
    assert len(set(throws)) == 16


def test_its_numbers_are_those_of_a_fair_source():
    rng = SecureRandom(chunk=64)
    faces = collections.Counter(rng.randrange(1, 7) for _ in range(60_000))
    assert set(faces) == {1, 2, 3, 4, 5, 6}
    assert all(9_000 < faces[face] < 11_000 for face in faces)  # 10,000 expected; 10 standard deviations away
    assert all(0.0 <= rng.random() < 1.0 for _ in range(1000))
    assert rng.getrandbits(0) == 0 and 0 <= rng.getrandbits(70) < 2**70
    with pytest.raises(ValueError):
        rng.getrandbits(-1)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="fork() is POSIX")
def test_a_forked_child_reads_its_own():
    rng = SecureRandom()
    rng.randbytes(1)  # the parent has bytes read ahead
    read, write = os.pipe()
    child = os.fork()
    if child == 0:  # the child: its next bytes, to the parent
        try:
            os.write(write, rng.randbytes(32))
        finally:
            os._exit(0)
    os.close(write)
    theirs = os.read(read, 32)
    os.close(read)
    os.waitpid(child, 0)
    assert len(theirs) == 32 and theirs != rng.randbytes(32)
