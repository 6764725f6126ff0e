"""The cache instance of a thread: one for all the calls the thread runs, whatever their async context."""

import contextvars
import threading

from django.core.cache.backends.locmem import LocMemCache

from core.caching import thread_cache


def test_a_thread_keeps_one_instance_whatever_the_context():
    first = contextvars.copy_context().run(thread_cache)
    second = contextvars.copy_context().run(thread_cache)
    assert first is second
    first.set("tab:test:shared", 7)
    assert second.get("tab:test:shared") == 7


def test_each_thread_has_its_own_instance_of_the_same_cache():
    mine = thread_cache()
    mine.set("tab:test:seen", "yes")
    seen = {}
    thread = threading.Thread(
        target=lambda: seen.update(cache=thread_cache(), value=thread_cache().get("tab:test:seen"))
    )
    thread.start()
    thread.join()
    assert seen["cache"] is not mine
    assert seen["value"] == "yes"


def test_changed_caches_settings_give_a_new_instance(settings):
    before = thread_cache()
    settings.CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "other"}}
    after = thread_cache()
    assert after is not before and isinstance(after, LocMemCache)
    assert thread_cache() is after
