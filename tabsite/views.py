from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render

# The pages people read in a browser get a page for an error; the API's functions get JSON.
PAGE_PREFIXES = ("/play/", "/rankings/", "/players/", "/games/")


def not_found(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    if request.path.startswith(PAGE_PREFIXES):
        message = exception.args[0] if exception is not None and exception.args else None
        return render(request, "404.html", {"message": message if isinstance(message, str) else None}, status=404)
    name = request.path.strip("/")
    if name and "/" not in name:
        return JsonResponse({"error": f"Unknown function '{name[:40]}'"}, status=404)
    return JsonResponse({"error": "Not found"}, status=404)


def bad_request(request: HttpRequest, exception: Exception | None = None) -> JsonResponse:
    return JsonResponse({"error": "Bad request"}, status=400)


def permission_denied(request: HttpRequest, exception: Exception | None = None) -> JsonResponse:
    return JsonResponse({"error": "Forbidden"}, status=403)


def server_error(request: HttpRequest) -> JsonResponse:
    return JsonResponse({"error": "Internal server error"}, status=500)
