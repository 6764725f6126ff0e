"""Middleware for the game API: cross-origin access, the client's address, and the refusals any view may meet.

django-cors-headers only answers requests that carry an Origin header; the course's protocol promises
`Access-Control-Allow-Origin: *` on every response, so that scripts and tools see the same headers as browsers.
"""

import logging

from asgiref.sync import iscoroutinefunction, markcoroutinefunction
from django.db import InterfaceError, OperationalError
from django.http import HttpResponse, JsonResponse
from django.utils.deprecation import MiddlewareMixin

from . import limits
from .errors import Refusal
from .transports import WebMount, mount_of

logger = logging.getLogger(__name__)

# Paths outside every protocol's mount (an unknown path's 404, /healthz) allow what the course API's do.
DEFAULT_MOUNT = WebMount("", "")
# Seconds a client is asked to wait while the database is unreachable.
DATABASE_RETRY_AFTER = 5


class BothModesMiddleware:
    """A middleware that runs natively in a sync or an async stack, as its `get_response` is."""

    sync_capable = True
    async_capable = True

    def __init__(self, get_response):
        self.get_response = get_response
        self.is_async = iscoroutinefunction(get_response)
        if self.is_async:
            markcoroutinefunction(self)


class CorsMiddleware(BothModesMiddleware):
    """Answer every preflight, and allow any origin on every response (the protocols' own handlers)."""

    def __call__(self, request):
        if self.is_async:
            return self.__acall__(request)
        if request.method == "OPTIONS":
            return self.preflight(request)
        response = self.get_response(request)
        response["Access-Control-Allow-Origin"] = "*"
        return response

    async def __acall__(self, request):
        if request.method == "OPTIONS":
            return self.preflight(request)
        response = await self.get_response(request)
        response["Access-Control-Allow-Origin"] = "*"
        return response

    @staticmethod
    def preflight(request) -> HttpResponse:
        """What the protocol mounted at the path allows (core/transports.py)."""
        mount = mount_of(request.path) or DEFAULT_MOUNT
        response = HttpResponse(status=204)
        response["Access-Control-Allow-Origin"] = "*"
        response["Access-Control-Allow-Methods"] = mount.methods
        response["Access-Control-Allow-Headers"] = mount.headers
        response["Access-Control-Max-Age"] = "86400"
        return response


# The site's own pages, the admin and the static files: read by people in a browser at this origin, never by another
# site's scripts (which must not read an administrator's pages with their cookies, for one).
SITE_PREFIXES = ("/admin/", "/account/", "/play/", "/rankings/", "/players/", "/games/", "/static/")


def answers_other_sites(path: str) -> bool:
    """Whether another site's scripts may read the answer: the protocols', not our pages' or their own calls'."""
    if path == "/" or path.startswith(SITE_PREFIXES):
        return False
    mount = mount_of(path)
    return mount is None or mount.cross_origin


class ApiCorsMiddleware(CorsMiddleware):
    """CORS for what Django's usual handler serves: the protocols' answers (an unknown function's 404, /healthz),
    not the site's pages."""

    def __call__(self, request):
        if not answers_other_sites(request.path):
            return self.get_response(request)
        return super().__call__(request)


class ClientAddressMiddleware(BothModesMiddleware):
    """Make the client's address known to the limits for the whole request, services included."""

    def __call__(self, request):
        if self.is_async:
            return self.__acall__(request)
        token = limits.current_address.set(limits.client_address(request))
        try:
            return self.get_response(request)
        finally:
            limits.current_address.reset(token)

    async def __acall__(self, request):
        token = limits.current_address.set(limits.client_address(request))
        try:
            return await self.get_response(request)
        finally:
            limits.current_address.reset(token)


def json_error(message: str, status: int, retry_after: int) -> JsonResponse:
    response = JsonResponse({"error": message}, status=status)
    response["Retry-After"] = str(retry_after)
    return response


class RefusalMiddleware(MiddlewareMixin):
    """Turn what any view may run into, beyond its own arguments, into a JSON error: a refusal (a limit reached: 429)
    and an unreachable database (503, the request changed nothing and may be sent again)."""

    def process_exception(self, request, exception):
        if isinstance(exception, Refusal):
            response = JsonResponse({"error": str(exception)}, status=exception.status)
            if exception.retry_after is not None:
                response["Retry-After"] = str(exception.retry_after)
            return response
        if isinstance(exception, OperationalError | InterfaceError):
            logger.error("database unavailable, %s %s answered 503: %s", request.method, request.path, exception)
            return json_error("The database is unavailable: try again in a few seconds", 503, DATABASE_RETRY_AFTER)
        return None
