"""Cross-origin access to the game API.

django-cors-headers only answers requests that carry an Origin header; the course's protocol promises
`Access-Control-Allow-Origin: *` on every response, so that scripts and tools see the same headers as browsers.
"""

from asgiref.sync import iscoroutinefunction, markcoroutinefunction
from django.http import HttpResponse

ALLOW_HEADERS = {
    "Access-Control-Allow-Origin": "*",
    "Access-Control-Allow-Methods": "GET, POST, OPTIONS",
    "Access-Control-Allow-Headers": "Content-Type, Last-Event-ID, Cache-Control",
    "Access-Control-Max-Age": "86400",
}


class CorsMiddleware:
    """Answer every preflight, and allow any origin on every response."""

    sync_capable = True
    async_capable = True

    def __init__(self, get_response):
        self.get_response = get_response
        self.is_async = iscoroutinefunction(get_response)
        if self.is_async:
            markcoroutinefunction(self)

    def __call__(self, request):
        if self.is_async:
            return self.__acall__(request)
        if request.method == "OPTIONS":
            return self.preflight()
        response = self.get_response(request)
        response["Access-Control-Allow-Origin"] = "*"
        return response

    async def __acall__(self, request):
        if request.method == "OPTIONS":
            return self.preflight()
        response = await self.get_response(request)
        response["Access-Control-Allow-Origin"] = "*"
        return response

    @staticmethod
    def preflight() -> HttpResponse:
        response = HttpResponse(status=204)
        for header, value in ALLOW_HEADERS.items():
            response[header] = value
        return response
