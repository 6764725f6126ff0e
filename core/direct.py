"""Direct answers: a protocol's busiest requests answered on the ASGI connection, without Django's request, middleware
chain and response objects.

A Plakoto client polls `status/` thousands of times a second; in-process, Django's request, its middleware and its
response cost a poll more than its read (about 60 % of its CPU). Such a request is small and its answer one JSON body,
so its protocol may serve it from the ASGI scope itself (a mount's `direct`, core/transports.py; the course API's
functions, protocols/course_api/handler.py) and answer with `answer()` here, which adds exactly the headers that the
protocols' lean handler would have added:

- the security headers of Django's `SecurityMiddleware` and the `Access-Control-Allow-Origin` of `CorsMiddleware`,
  worked out by those middleware themselves on a stand-in request with the same scheme and proxy header (the only
  parts of a request they read for them) and kept per pair.

An answer written by the HTTP protocol itself (a mount's `early`, core/server.py) carries the same headers, from
`headers_of` and `json_head`.

A request that Django's middleware would answer differently goes to the lean handler instead (`Direct.fallback`): a
preflight (OPTIONS), and any request that `SecurityMiddleware` would redirect to HTTPS. What a view raises is turned
into the answer Django's would give (`failure`: RefusalMiddleware's to a limit or an unreachable database, Django's
own 500 to anything else), and answers of 400 and more are logged as Django logs them.
"""

import io
from collections.abc import Awaitable, Callable

from django.conf import settings
from django.core.exceptions import DisallowedHost
from django.core.handlers.asgi import ASGIRequest
from django.core.handlers.exception import response_for_exception
from django.http import HttpResponse, HttpResponseBase
from django.middleware.security import SecurityMiddleware
from django.utils.log import log_response

from .middleware import CorsMiddleware, RefusalMiddleware

Headers = list[tuple[bytes, bytes]]
ASGIApp = Callable[..., Awaitable[None]]


async def read_small_body(receive) -> bytes | None:
    """Return the whole body of a request (BodySizeLimit has bounded it), or None when the client left first."""
    chunks = []
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return None
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            return b"".join(chunks)


def _proxy_header() -> bytes | None:
    """The request header that says a proxy received the request over HTTPS (SECURE_PROXY_SSL_HEADER), as it comes in
    the ASGI scope, if one is set."""
    if not settings.SECURE_PROXY_SSL_HEADER:
        return None
    name = settings.SECURE_PROXY_SSL_HEADER[0]
    return name.removeprefix("HTTP_").replace("_", "-").lower().encode("latin-1")


def header_value(scope: dict, name: bytes) -> str | None:
    """A request header's value as Django reads it (Latin-1; several of one name joined by commas), or None."""
    values = [value for key, value in scope["headers"] if key.lower() == name]
    if not values:
        return None
    return ",".join(value.decode("latin-1") for value in values)


def _added_of(scheme: str, proxy: bytes | None, proxied: str | None) -> Headers | None:
    """The headers the lean handler's middleware adds to an answer for a request of this scheme and proxy header
    (CorsMiddleware's, SecurityMiddleware's), or None when it would redirect such a request (SECURE_SSL_REDIRECT):
    worked out by that middleware itself on a stand-in."""
    headers = [] if proxy is None or proxied is None else [(proxy, proxied.encode("latin-1"))]
    scope = {"type": "http", "method": "GET", "path": "/", "scheme": scheme, "headers": headers, "query_string": b""}
    chain = CorsMiddleware(SecurityMiddleware(lambda request: HttpResponse()))
    try:
        response = chain(ASGIRequest(scope, io.BytesIO()))
    except DisallowedHost:  # it asked the stand-in for the host to redirect to: it redirects such requests
        return None
    if response.status_code != 200:
        return None
    return [
        (name.encode("latin-1"), value.encode("latin-1")) for name, value in response.items() if name != "Content-Type"
    ]


# The headers the middleware adds, by scheme and proxy header: None where the request is redirected.
_added: dict[tuple[str, str | None], Headers | None] = {}


def headers_of(scope: dict) -> Headers | None:
    """The headers of every answer to this request but its type and length, or None if the lean handler must answer
    it (a preflight; a request SecurityMiddleware redirects). Reads the scope's method, scheme and headers only."""
    if scope["method"] == "OPTIONS":
        return None
    proxy = _proxy_header()
    proxied = None if proxy is None else header_value(scope, proxy)
    key = (scope.get("scheme", "http"), proxied)
    if key not in _added:
        if len(_added) >= 16:  # a proxy header that varies: work it out each time
            _added.clear()
        _added[key] = _added_of(key[0], proxy, proxied)
    return _added[key]


class Direct:
    """What answers a protocol's requests directly; `fallback` is the lean handler, for the requests it leaves."""

    def __init__(self, fallback: ASGIApp) -> None:
        self.fallback = fallback

    def headers(self, scope: dict) -> Headers | None:
        """`headers_of(scope)`."""
        return headers_of(scope)


def json_head(body: bytes, headers: Headers) -> Headers:
    """The headers of a JSON answer: its type, the headers given, its length."""
    return _with_length([(b"Content-Type", b"application/json"), *headers], body)


def _with_length(head: Headers, body: bytes) -> Headers:
    return [*head, (b"Content-Length", str(len(body)).encode())]


async def answer(scope: dict, send, status: int, body: bytes, headers: Headers) -> None:
    """Send a JSON answer with these headers; one of 400 or more is logged as Django's handler logs it."""
    if status >= 400:
        response = HttpResponse(status=status)
        log_response("%s: %s", response.reason_phrase, scope["path"], response=response)
    await _send(send, status, json_head(body, headers), body)


async def answer_response(scope: dict, send, response: HttpResponseBase, headers: Headers) -> None:
    """Send one of Django's responses (a refusal with its own headers, a failure: rare) with these headers besides its
    own; one of 400 or more is logged as Django's handler logs it (unless it was already)."""
    if response.status_code >= 400:
        log_response("%s: %s", response.reason_phrase, scope["path"], response=response)
    own = [(name.encode("latin-1"), value.encode("latin-1")) for name, value in response.items()]
    names = {name.lower() for name, _ in own} | {b"content-length"}
    head = [pair for pair in own if pair[0].lower() != b"content-length"]
    head += [pair for pair in headers if pair[0].lower() not in names]
    await _send(send, response.status_code, _with_length(head, response.content), response.content)


async def _send(send, status: int, head: Headers, body: bytes) -> None:
    await send({"type": "http.response.start", "status": status, "headers": head})
    await send({"type": "http.response.body", "body": body})


def failure(scope: dict, body: bytes, error: Exception) -> HttpResponseBase:
    """The answer Django's lean handler gives when a view raises `error`: RefusalMiddleware's to a refusal or an
    unreachable database, Django's own to anything else (logged with its traceback; 500). Made with Django's request,
    as it would be."""
    request = ASGIRequest(scope, io.BytesIO(body))
    response = RefusalMiddleware(lambda request: None).process_exception(request, error)
    return response if response is not None else response_for_exception(request, error)
