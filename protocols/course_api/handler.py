"""The ASGI handler for the course protocol: many small requests and thousands of long-lived streams.

It is Django's own `ASGIHandler` with two differences that matter at that scale:

- No `ThreadSensitiveContext` per request. Django's handler gives each request a thread of its own for its
  synchronous parts, so each request starts a thread and each open stream keeps one parked for its whole life.
  Here the database work runs where the process runs its database calls (core/dbthread.py: one thread, or with
  SQLite the event loop itself), on one connection (CONN_MAX_AGE); it applies the games' writes in batches instead
  of racing for SQLite's write lock, and costs nothing per stream. Slow work (password hashing, a stream's first
  snapshot) goes to worker threads.
- A function's request is one JSON object of a few hundred bytes, answered at once: it is read into memory, and
  answered without the request signals (their receivers manage the database connection, which lives in the database
  thread and is checked there before each call, core/dbthread.py) and without a task watching for the client's
  disconnection (nothing is left to cancel). Together these were two thirds of a request's CPU. A stream, which
  waits for events as long as its client stays, has one task watching for the client, which cancels it.
- Only the middleware the protocol needs (CORS, the client's address for the limits, the security headers, and the
  refusals of RefusalMiddleware: 429 and 503), called on the event loop. Django's session, CSRF, authentication
  and messages middleware serve nothing here, and each would cost two trips to a thread per request.

The actions themselves go further: `serve_function` answers them on the ASGI connection, without Django's request,
middleware chain and response, with the same headers and refusals (core/direct.py); this handler serves what it
leaves. Everything else (pages, admin, static files) goes to Django's usual handler with the full middleware stack.
"""

import asyncio
import contextlib
import io
import json

from django.core.handlers.asgi import ASGIHandler
from django.core.handlers.exception import convert_exception_to_response
from django.core.serializers.json import DjangoJSONEncoder
from django.http import HttpResponseBase
from django.middleware.security import SecurityMiddleware
from django.urls import get_resolver
from django.urls.resolvers import ResolverMatch
from django.utils.log import log_response
from django.utils.module_loading import import_string

from core import limits, transports
from core.calls import arguments_of
from core.direct import Direct, answer, answer_response, failure, header_value, read_small_body
from core.errors import Refusal
from core.middleware import ClientAddressMiddleware, CorsMiddleware, RefusalMiddleware

from . import urls
from .api import refusal_response

# The paths this handler serves come from the protocol's own URL patterns: a function added there is served here.
API_PATHS = frozenset(f"/{pattern.pattern}" for pattern in urls.functions)
SPECTATORS = [pattern.pattern.regex for pattern in urls.spectators]
# Matches of paths kept by a process: every function's, and the latest of the lean mounts' short paths (any path may
# be asked there: a match is about 2.6 KB, so at most about 13 MB).
MATCHES_KEPT = 5_000
MATCHED_PATH_MAX = 100


def served_as_api(path: str) -> bool:
    """Whether `path` is one of the protocol's functions, a spectator's stream (/games/<id>/stream), or under a prefix
    that another protocol mounts to be served the same lean way (core/transports.py: Plakoto's /plakoto/)."""
    return (
        path in API_PATHS
        or path.startswith(transports.lean_prefixes())
        or any(regex.match(path[1:]) for regex in SPECTATORS)
    )


class ApiHandler(ASGIHandler):
    def __init__(self):
        super().__init__()
        self._resolver = None
        self._matches: dict[str, ResolverMatch] = {}

    def resolve_request(self, request) -> ResolverMatch:
        """Resolve the request's view as Django does; a path's match is made once and kept: a function's (its path
        has no arguments), and those of the latest paths under a lean mount (a Plakoto table's `status/`, polled
        again and again). Building it each time was about 4 % of the CPU of an action, 8 % of a poll's."""
        path = request.path_info
        kept = path in API_PATHS or (len(path) <= MATCHED_PATH_MAX and path.startswith(transports.lean_prefixes()))
        if hasattr(request, "urlconf") or not kept:
            return super().resolve_request(request)
        resolver = get_resolver()
        if resolver is not self._resolver:  # the URLconf changed (a test's settings): forget the old matches
            self._resolver, self._matches = resolver, {}
        match = self._matches.get(path)
        if match is None:
            match = resolver.resolve(path)
            if len(self._matches) >= MATCHES_KEPT:
                del self._matches[next(iter(self._matches))]  # the oldest
            self._matches[path] = match
        request.resolver_match = match
        return match

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            raise ValueError(f"The API serves only HTTP connections, not {scope['type']}")
        body = await read_small_body(receive)
        if body is None:
            return
        response = await self.respond(scope, body)
        if response.streaming:
            await self.stream(response, receive, send)
            return
        if not response.has_header("Content-Length"):
            # As CommonMiddleware would: without it the server sends the answer chunked, which costs both sides more.
            response.headers["Content-Length"] = str(len(response.content))
        await self.send_response(response, send)

    async def respond(self, scope, body: bytes) -> HttpResponseBase:
        """Run the middleware and the view on a request; return the response."""
        request, response = self.create_request(scope, io.BytesIO(body))
        if request is None:
            return response
        response = await self._middleware_chain(request)
        if response.status_code >= 400:
            log_response("%s: %s", response.reason_phrase, request.path, response=response, request=request)
        return response

    async def send_response(self, response: HttpResponseBase, send) -> None:
        """Send a response as Django's handler does, for less when it has no cookies (every answer of a function and
        every stream): its headers are already checked and kept as Latin-1 text by the response; a body goes in one
        message, and each part of a stream in one message as it comes (Django's handler cuts each part through a
        generator of its own, for parts far larger than a stream's events)."""
        if response.cookies:
            await super().send_response(response, send)
            return
        headers = [(name.encode("latin-1"), value.encode("latin-1")) for name, value in response.items()]
        await send({"type": "http.response.start", "status": response.status_code, "headers": headers})
        if not response.streaming:
            await send({"type": "http.response.body", "body": response.content})
            return
        # Closed when the stream ends, fails or is cancelled (its client left), as Django's handler does: its
        # `finally` releases what the stream holds at once, not when the collector finds it.
        async with contextlib.aclosing(aiter(response)) as parts:
            async for part in parts:
                await send({"type": "http.response.body", "body": part, "more_body": True})
        await send({"type": "http.response.body"})

    async def stream(self, response: HttpResponseBase, receive, send) -> None:
        """Send a stream until it ends or the client goes away, whichever comes first.

        What Django's `handle` does, for less: a stream is held for hours, by thousands of clients at once, and the
        garbage collector walks everything they keep. Django's keeps the request, a task group and a class of its own
        per request; here the request is gone once the view has answered, and one task watches for the client.
        """
        task = asyncio.current_task()

        async def client_leaves() -> None:
            while (await receive())["type"] != "http.disconnect":
                pass
            task.cancel()

        watcher = asyncio.ensure_future(client_leaves())
        try:
            await self.send_response(response, send)
        except asyncio.CancelledError:
            # Cancelled by the watcher: the client left, the stream is over. Cancelled by anyone else: pass it on.
            if not watcher.done() or task.uncancel() > 0:
                raise
        finally:
            watcher.cancel()

    def load_middleware(self, is_async=False):
        self._view_middleware = []
        self._template_response_middleware = []
        # Django runs these on an exception from a view (in the database thread).
        self._exception_middleware = [RefusalMiddleware(lambda request: None).process_exception]
        views = convert_exception_to_response(self._get_response_async)
        # Its hooks do no I/O (HTTPS redirect, HSTS and the other security headers): called inline on the loop.
        security = SecurityMiddleware(lambda request: None)

        async def secured(request):
            return security.process_request(request) or security.process_response(request, await views(request))

        self._middleware_chain = convert_exception_to_response(CorsMiddleware(ClientAddressMiddleware(secured)))


# The functions' views by path: each answered on the connection itself (`serve_function`) when called as it should be.
FUNCTION_VIEWS = {f"/{pattern.pattern}": pattern.callback for pattern in urls.functions}
FORWARDED_FOR = b"x-forwarded-for"
# Every action's answer (an empty object), written without an encoder made for it (5 µs, 0.5 % of an action's CPU).
EMPTY_OBJECT = b"{}"


async def serve_function(scope, receive, send, direct: Direct) -> None:
    """A function of the protocol answered on the ASGI connection itself (core/direct.py): what its view answers, with
    the headers the lean handler would add, for less CPU (each player's every action is a call). A stream (`update`),
    a function limited per address (`register`, `join`: a decorator around its view), a wrong method and a preflight
    go to the lean handler."""
    view = FUNCTION_VIEWS[scope["path"]]
    headers = direct.headers(scope)
    if getattr(view, "api_view", None) is not view or headers is None or scope["method"] != view.method:
        await direct.fallback(scope, receive, send)
        return
    body = await read_small_body(receive)
    if body is None:
        return
    peer = scope["client"][0] if scope.get("client") else ""
    address = limits.current_address.set(limits.address_of(peer, header_value(scope, FORWARDED_FOR) or ""))
    try:
        try:
            result = await view.function(arguments_of(body))
            text = EMPTY_OBJECT if result == {} else json.dumps(result, cls=DjangoJSONEncoder).encode()
        except Refusal as error:
            await answer_response(scope, send, refusal_response(error), headers)
            return
    except Exception as error:  # noqa: BLE001 - answered as Django's handler would (an unreachable database: 503)
        await answer_response(scope, send, failure(scope, body, error), headers)
        return
    finally:
        limits.current_address.reset(address)
    await answer(scope, send, 200, text, headers)


def application_for(pages: ASGIHandler):
    """Return the ASGI application: the protocol's paths and the spectators' streams to `ApiHandler`, the rest
    to `pages`."""
    api = ApiHandler()
    # The mounts that answer their own requests (core/direct.py), leaving the rest to the lean handler.
    direct = Direct(api)
    serving = [(f"/{mount.prefix}", import_string(mount.direct)) for mount in transports.mounts() if mount.direct]

    # Not a coroutine of its own: the handler's is awaited directly, one frame fewer for every resumption of a request.
    def application(scope, receive, send):
        if scope["type"] == "http":
            path = scope["path"]
            if path in FUNCTION_VIEWS:
                return serve_function(scope, receive, send, direct)
            for prefix, serve in serving:
                if path.startswith(prefix):
                    return serve(scope, receive, send, direct)
            if served_as_api(path):
                return api(scope, receive, send)
        return pages(scope, receive, send)

    return application
