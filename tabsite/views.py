from django.http import HttpRequest, JsonResponse


def not_found(request: HttpRequest, exception: Exception | None = None) -> JsonResponse:
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
