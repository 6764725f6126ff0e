"""Signing in to the site: a Django session (a cookie), so that a new tab, a restarted browser or another device finds
the player signed in, and the player's games in progress, to go back to one.

The calls are the site's own page's: JSON in and out, each POST checked against Django's CSRF token. Signing in with
a nick and a password is the course's `register`: a new nick makes the account, a known one checks its password,
with the same limits. The course API itself knows no sessions: its clients send a nick and a password every time.
"""

from typing import Any

from asgiref.sync import sync_to_async
from django.contrib.auth import alogin, alogout, get_user_model
from django.http import HttpRequest, JsonResponse
from django.views.csrf import csrf_failure as django_csrf_failure
from django.views.decorators.http import require_GET, require_POST

from core.calls import answered, arguments, refused, signed_in_user
from core.errors import Refusal
from core.limits import per_address
from core.text import is_short_text
from games.invitations import invitations_of
from games.selectors import games_in_progress

from .nickrule import NICK_MAX_LENGTH
from .services import PASSWORD_MAX_LENGTH, sessions_end, user_register


def _text(args: dict[str, Any], name: str, max_length: int) -> str:
    value = args.get(name)
    if not is_short_text(value, max_length):
        raise Refusal(f"Enter a {name} of 1 to {max_length} characters")
    return value


@require_POST
@per_address("register", "TAB_REGISTER_PER_MINUTE")
@answered
async def sign_in(request: HttpRequest) -> dict[str, Any]:
    """POST /account/sign-in {nick, password}: make the account or check its password, and sign in to the session."""
    args = arguments(request)
    nick = _text(args, "nick", NICK_MAX_LENGTH)
    password = _text(args, "password", PASSWORD_MAX_LENGTH)
    user = await get_user_model().objects.aget(pk=await user_register(nick=nick, password=password))
    await alogin(request, user)
    return {"nick": user.get_username()}


@require_POST
async def sign_out(request: HttpRequest) -> JsonResponse:
    """POST /account/sign-out: end this session."""
    await alogout(request)
    return JsonResponse({})


@require_POST
@answered
async def sign_out_everywhere(request: HttpRequest) -> dict[str, Any]:
    """POST /account/sign-out-everywhere: end every session the account signed in to, this one included."""
    user = await signed_in_user(request, "You are not signed in")
    ended = await sync_to_async(sessions_end)(user_id=user.pk)
    await alogout(request)
    return {"sessions": ended}


@require_GET
async def my_games(request: HttpRequest) -> JsonResponse:
    """GET /account/games: who is signed in to this session ({"nick": null} if nobody), their games in progress, of
    every kind, newest first, and their open invitations, sent and received."""
    user = await request.auser()
    if not user.is_authenticated:
        return JsonResponse({"nick": None, "games": [], "invitations": {"sent": [], "received": []}})
    games = await sync_to_async(games_in_progress)(player_id=user.pk)
    invitations = await sync_to_async(invitations_of)(user.pk)
    return JsonResponse({"nick": user.get_username(), "games": games, "invitations": invitations})


def csrf_failure(request: HttpRequest, reason: str = "") -> Any:
    """A call of the site's own page without a valid CSRF token gets a JSON error it can show; a form, Django's page."""
    if request.content_type == "application/json":
        return refused("This page has expired: reload it and try again", 403)
    return django_csrf_failure(request, reason)
