"""Where each protocol's web transport lives: its URL prefix and patterns, whether the protocols' lean handler serves
it, and what it allows another site's scripts.

A protocol's app lists its own mounts (`web_mounts` on its AppConfig); the project's URLconf, the lean handler and
the cross-origin middleware read them here. Adding a protocol therefore changes none of them.
"""

from dataclasses import dataclass
from functools import cache

from django.apps import apps
from django.urls import URLPattern, URLResolver, include, path


@dataclass(frozen=True)
class WebMount:
    # Under which path ("plakoto/"; "" for paths at the root), and the module of the URL patterns served there.
    prefix: str
    urls: str
    # Served by the protocols' lean handler: many small requests of clients that poll, answered without Django's
    # sessions, CSRF and authentication (a mount at the root names its exact paths in its own patterns instead).
    lean: bool = False
    # Answered to any site's scripts (a protocol's clients); False for calls of our own pages, which carry cookies.
    cross_origin: bool = True
    # What a cross-origin preflight allows.
    methods: str = "GET, POST, OPTIONS"
    headers: str = "Content-Type, Last-Event-ID, Cache-Control"
    # The dotted path of `serve(scope, receive, send, direct)`, which answers the mount's requests on the ASGI
    # connection itself and hands the lean handler those it leaves (core/direct.py); "" for none.
    direct: str = ""
    # The dotted path of `early(path, scope)`, which answers a GET of the mount from memory before the application is
    # called (core/server.py: no request cycle, no task), or returns None to leave it to `direct`; "" for none.
    early: str = ""


def mounts() -> list[WebMount]:
    """Every installed app's mounts, in the order of INSTALLED_APPS."""
    return [mount for config in apps.get_app_configs() for mount in getattr(config, "web_mounts", ())]


def url_patterns() -> list[URLPattern | URLResolver]:
    return [path(mount.prefix, include(mount.urls)) for mount in mounts()]


@cache
def _prefixed() -> list[tuple[str, WebMount]]:
    # Longest first, so that a mount inside another's path is found first.
    found = [(f"/{mount.prefix}", mount) for mount in mounts() if mount.prefix]
    return sorted(found, key=lambda item: len(item[0]), reverse=True)


def mount_of(path: str) -> WebMount | None:
    """The mount whose prefix `path` is under, if any (mounts at the root are not looked for)."""
    return next((mount for prefix, mount in _prefixed() if path.startswith(prefix)), None)


@cache
def lean_prefixes() -> tuple[str, ...]:
    return tuple(prefix for prefix, mount in _prefixed() if mount.lean)
