"""The course's functions as the site's own Tâb page calls them: the player is the one the site's session signed in
(a cookie, with Django's CSRF check on every call) instead of a nick and a password in every body; the arguments,
the checks, the limits and the answers are the course functions' own. Course clients never come here: they call the
functions at the root, as the course server served them."""

from collections.abc import Awaitable, Callable

from django.http import HttpRequest, JsonResponse

from core.errors import Refusal
from core.limits import per_address

from . import views
from .api import SignedIn, error_response, method_not_allowed, parse_body, refusal_response

SIGN_IN_FIRST = "Sign in first: your session has ended"


def signed_in(view: Callable[..., Awaitable[JsonResponse]]) -> Callable[..., Awaitable[JsonResponse]]:
    """Return the site's view of a course function's view (`api_function`)."""
    function = view.function  # type: ignore[attr-defined]

    async def site_view(request: HttpRequest) -> JsonResponse:
        if request.method != "POST":
            return method_not_allowed(request, "POST")
        user = await request.auser()
        if not user.is_authenticated:
            return error_response(SIGN_IN_FIRST, 401)
        try:
            return JsonResponse(await function(SignedIn(parse_body(request), user.pk)))
        except Refusal as error:
            return refusal_response(error)

    site_view.__name__ = site_view.__qualname__ = f"site_{function.__name__}"
    return site_view


join = per_address("join", "TAB_JOIN_PER_MINUTE")(signed_in(views.join))
leave = signed_in(views.leave)
roll = signed_in(views.roll)
pass_turn = signed_in(views.pass_turn)
notify = signed_in(views.notify)
