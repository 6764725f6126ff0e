"""The site's own pages' calls about matches (JSON, signed in by the site's session, each POST CSRF-checked):
invitations to a match between friends, and rematches."""

from typing import Any

from asgiref.sync import sync_to_async
from django.http import HttpRequest
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from core.calls import answered, arguments, signed_in_user
from core.errors import Refusal
from core.limits import per_address

from . import invitations, selectors
from .bots import PRACTICE_GROUPS
from .models import GROUP_MAX
from .rules import ENGINES

SIGN_IN_FIRST = "Log in first to invite or answer"


def _group(value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= GROUP_MAX:
        raise Refusal("The group must be a whole number, 1 or more")
    if value in PRACTICE_GROUPS:
        raise Refusal(f"Group {value} is for practice against the computer: choose another")
    return str(value)


@require_http_methods(["GET", "POST"])
@per_address("join", "TAB_JOIN_PER_MINUTE")
@answered
async def invitations_view(request: HttpRequest) -> dict[str, Any]:
    """POST /play/invitations {kind, options, group}: invite whoever opens the link; or {rematch: game id}: offer the
    opponent of that finished game another (accepted at once if they offered one already).
    GET /play/invitations?rematch_of=<game>: {"offer": the opponent's open offer to play that game again, or null}."""
    user_id = (await signed_in_user(request, SIGN_IN_FIRST)).pk
    if request.method == "GET":
        game = request.GET.get("rematch_of", "")[:64]
        return {"offer": await sync_to_async(invitations.rematch_offered)(user_id=user_id, public_id=game)}
    args = arguments(request)
    if "rematch" in args:
        if not isinstance(args["rematch"], str):
            raise Refusal("rematch must be a game id")
        made = await sync_to_async(invitations.rematch_offer)(user_id=user_id, public_id=args["rematch"])
    else:
        kind, options = args.get("kind"), args.get("options", {})
        if not isinstance(kind, str) or kind not in ENGINES:
            raise Refusal(f"No such game: {kind!r}"[:80])
        if not isinstance(options, dict):
            raise Refusal("options must be a JSON object")
        made = await sync_to_async(invitations.invitation_open)(
            user_id=user_id, kind=kind, options=options, pool=_group(args.get("group"))
        )
    return await sync_to_async(invitations.invitation_view)(made)


@require_GET
@answered
async def invitation(request: HttpRequest, token: str) -> dict[str, Any]:
    """GET /play/invitations/<token>: the invitation, for whoever has its link."""
    found = await sync_to_async(invitations.invitation_by_token)(token)
    if found is None:
        raise Refusal("No such invitation: check the link", status=404)
    return found


ANSWERS = {
    "accept": invitations.invitation_accept,
    "decline": invitations.invitation_close,
    "cancel": invitations.invitation_close,
}


@require_POST
@answered
async def invitation_answer(request: HttpRequest, token: str, answer: str) -> dict[str, Any]:
    """POST /play/invitations/<token>/accept | decline | cancel: the match starts, or the invitation is closed."""
    if answer not in ANSWERS:
        raise Refusal("Answer accept, decline or cancel", status=404)
    user_id = (await signed_in_user(request, SIGN_IN_FIRST)).pk
    answered = await sync_to_async(ANSWERS[answer])(token=token, user_id=user_id)
    return await sync_to_async(invitations.invitation_view)(answered)


@require_GET
@answered
async def game_result(request: HttpRequest, public_id: str) -> dict[str, Any]:
    """GET /games/<id>/result: how the game stands or ended, with the rating changes of a rated match."""
    found = await sync_to_async(selectors.game_result)(public_id[:64])
    if found is None:
        raise Refusal("No such game", status=404)
    return found
