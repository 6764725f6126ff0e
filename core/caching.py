"""This thread's own instance of the default cache, kept for the thread's life.

Django keeps one cache instance per async context. The database thread runs each call in a copy of its caller's
context, so every call made a new instance (with django-redis, a new client: a tenth of that thread's work per action
with Redis), as does every trip to a worker thread. One instance per thread is what Django's caches are built for;
instances of the same cache share its data (a LocMem cache's store is per process, Redis is Redis).

Whether that data is shared by every server process (`cache_is_shared`) decides where some of it may be kept instead:
a cache in the process's own memory is what the process itself wrote, nothing more.
"""

import threading

from django.core.cache import BaseCache, caches
from django.core.cache.backends.locmem import LocMemCache
from django.core.signals import setting_changed
from django.dispatch import receiver

_local = threading.local()
_generation = 0  # bumped when CACHES changes (tests): every thread makes a new instance


def thread_cache() -> BaseCache:
    if getattr(_local, "generation", None) != _generation:
        _local.cache, _local.generation = caches.create_connection("default"), _generation
    return _local.cache


def cache_is_shared() -> bool:
    """Whether the default cache is shared by the server's processes (Redis), not held in this process's memory."""
    return not isinstance(thread_cache(), LocMemCache)


@receiver(setting_changed)
def _caches_changed(setting: str, **kwargs) -> None:
    global _generation
    if setting == "CACHES":
        _generation += 1
