"""The ASGI handler for the course protocol: many small requests and thousands of long-lived streams.

It is Django's own `ASGIHandler` with two differences that matter at that scale:

- No `ThreadSensitiveContext` per request. Django's handler gives each request a thread of its own for its
  synchronous parts, so each request starts a thread and each open stream keeps one parked for its whole life.
  Here those parts run in asgiref's single synchronous thread of the process: the database thread, which keeps
  one connection (CONN_MAX_AGE), applies the games' writes one at a time instead of racing for SQLite's write lock,
  and costs nothing per stream. Slow work (password hashing, a stream's first snapshot) goes to worker threads.
- A function's request is one JSON object of a few hundred bytes, answered at once: it is read into memory, and
  answered without the request signals (their receivers manage the database connection, which lives in the database
  thread and is checked there before each service) and without a task watching for the client's disconnection
  (nothing is left to cancel). Together these were two thirds of a request's CPU. The streams, which wait for
  events as long as the client stays, keep Django's full `handle`, which cancels them when the client goes away.
- Only the middleware the protocol needs (CORS, the client's address for the limits, the security headers, and the
  refusals of RefusalMiddleware: 429 and 503), called on the event loop. Django's session, CSRF, authentication
  and messages middleware serve nothing here, and each would cost two trips to a thread per request.

Everything else (pages, admin, static files) goes to Django's usual handler with the full middleware stack.
"""

import io

from django.core.handlers.asgi import ASGIHandler
from django.core.handlers.exception import convert_exception_to_response
from django.middleware.security import SecurityMiddleware
from django.utils.log import log_response

from .middleware import ClientAddressMiddleware, CorsMiddleware, RefusalMiddleware

# The course protocol's functions, at the root of the server.
API_PATHS = frozenset({"/register", "/join", "/leave", "/roll", "/pass", "/notify", "/update", "/ranking"})


def served_as_api(path: str) -> bool:
    """Whether `path` is one of the protocol's functions or a spectator's stream (/games/<id>/stream)."""
    return path in API_PATHS or (path.startswith("/games/") and path.endswith("/stream"))


def is_stream(path: str) -> bool:
    return path == "/update" or path.startswith("/games/")


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


class ApiHandler(ASGIHandler):
    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            raise ValueError(f"The API serves only HTTP connections, not {scope['type']}")
        if is_stream(scope["path"]):
            await self.handle(scope, receive, send)
        else:
            await self.answer(scope, receive, send)

    async def answer(self, scope, receive, send):
        """Serve one of the protocol's functions: read the body, run the middleware and the view, send the JSON."""
        body = await read_small_body(receive)
        if body is None:
            return
        request, response = self.create_request(scope, io.BytesIO(body))
        if request is not None:
            response = await self._middleware_chain(request)
            if response.status_code >= 400:
                log_response("%s: %s", response.reason_phrase, request.path, response=response, request=request)
        if not response.streaming and not response.has_header("Content-Length"):
            # As CommonMiddleware would: without it the server sends the answer chunked, which costs both sides more.
            response.headers["Content-Length"] = str(len(response.content))
        await self.send_response(response, send)

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


def application_for(pages: ASGIHandler):
    """Return the ASGI application: the protocol's paths and the spectators' streams to `ApiHandler`, the rest
    to `pages`."""
    api = ApiHandler()

    async def application(scope, receive, send):
        if scope["type"] == "http" and served_as_api(scope["path"]):
            await api(scope, receive, send)
        else:
            await pages(scope, receive, send)

    return application
