"""GET /healthz, for load balancers: is this process able to serve, with its database and (when set) Redis?

Answered before the rest of the middleware, so that a balancer's probe is never redirected to HTTPS, refused for its
Host header (balancers often probe an instance by its address) or counted by the limits.
"""

import redis
from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import DatabaseError, connection
from django.http import HttpRequest, HttpResponse, JsonResponse

from .dbthread import in_database_thread
from .middleware import BothModesMiddleware

PATH = "/healthz"
# A probe must answer within a balancer's usual timeout, whatever is down.
REDIS_TIMEOUT_SECONDS = 1.0


def database_status() -> str:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    except DatabaseError:
        return "unavailable"
    return "ok"


def redis_status() -> str:
    if not settings.REDIS_URL:
        return "not configured"
    client = redis.Redis.from_url(
        settings.REDIS_URL, socket_connect_timeout=REDIS_TIMEOUT_SECONDS, socket_timeout=REDIS_TIMEOUT_SECONDS
    )
    try:
        client.ping()
    except redis.RedisError:
        return "unavailable"
    finally:
        client.close()
    return "ok"


def health_response(checks: dict[str, str]) -> JsonResponse:
    healthy = all(status in ("ok", "not configured") for status in checks.values())
    response = JsonResponse({"status": "ok" if healthy else "unavailable", **checks}, status=200 if healthy else 503)
    response["Cache-Control"] = "no-store"
    return response


def refused_method(request: HttpRequest) -> JsonResponse | None:
    if request.method in ("GET", "HEAD"):
        return None
    return JsonResponse({"error": f"Method {request.method} not allowed: use GET"}, status=405)


class HealthCheckMiddleware(BothModesMiddleware):
    """Answer GET and HEAD /healthz; pass every other request on."""

    def __call__(self, request: HttpRequest):
        if self.is_async:
            return self.__acall__(request)
        if request.path != PATH:
            return self.get_response(request)
        return refused_method(request) or health_response({"database": database_status(), "redis": redis_status()})

    async def __acall__(self, request: HttpRequest) -> HttpResponse:
        if request.path != PATH:
            return await self.get_response(request)
        if refused := refused_method(request):
            return refused
        # The query goes where the API's do: database calls that are stuck make the process unhealthy too.
        database = await in_database_thread(database_status)()
        redis_reached = await sync_to_async(redis_status, thread_sensitive=False)()
        return health_response({"database": database, "redis": redis_reached})
