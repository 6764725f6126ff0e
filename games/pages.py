"""The history pages: the games that were played, one game with its log and replay (or, in play, watched live).

The list is every game's; a game's own page is its kind's template, `games/<kind>/game.html` (Tâb's draws the board
and replays the log with the browser's rules engine), or the plain `games/game.html` for a game without one.
"""

import random
from urllib.parse import urlencode

from django.conf import settings
from django.db.models import Count
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.template import TemplateDoesNotExist
from django.template.loader import get_template, select_template
from django.urls import reverse
from django.utils import timezone

from core import lineservers
from core.pagination import page_of
from rankings.pages import table_url
from rankings.selectors import player_by_nick

from . import selectors
from .lobby import seeks_of
from .models import Game
from .rules import ENGINES, find_engine

GAMES_PER_PAGE = 50


def lobby(request: HttpRequest) -> HttpResponse:
    """GET /: every game the platform hosts, each with its page, how many are in play and how many wait for players.

    A game is offered here once its engine is registered; its card is `games/<kind>/about.html`."""
    counts = {
        (row["kind"], row["status"]): row["count"]
        for row in Game.objects.filter(status__in=[Game.Status.WAITING, Game.Status.PLAYING])
        .values("kind", "status")
        .annotate(count=Count("id"))
    }
    games = [
        {
            "kind": kind,
            "title": engine.title,
            "seats": f"{engine.min_seats}–{engine.max_seats}"
            if engine.min_seats < engine.max_seats
            else engine.min_seats,
            "url": reverse("play", args=[kind]) if _play_page(kind) else None,
            "about": select_template([f"games/{kind}/about.html", "games/about.html"]),
            "playing": counts.get((kind, Game.Status.PLAYING), 0),
            "waiting": counts.get((kind, Game.Status.WAITING), 0),
            "seeks": seeks_of(kind),
        }
        for kind, engine in ENGINES.items()
    ]
    mine = selectors.games_in_progress(player_id=request.user.pk) if request.user.is_authenticated else []
    return render(request, "lobby.html", {"games": games, "my_games": mine, "section": "play"})


def play(request: HttpRequest, kind: str) -> HttpResponse:
    """GET /play/<game>/: the page where a game is played (`games/<kind>/play.html`)."""
    if kind not in ENGINES:
        raise Http404("No such game")
    template = _play_page(kind)
    if template is None:
        raise Http404("This game is played through its protocol only, for now")
    # The ports of the line servers, for the pages that tell how to connect a client of one.
    ports = {server.name: server.port for server in lineservers.registered()}
    context = {
        "kind": kind,
        "ports": ports,
        "host": request.get_host().rsplit(":", 1)[0],
        "fish_turn_timeout": settings.FISH_TURN_TIMEOUT,
        "section": "play",
    }
    return HttpResponse(template.render(context, request))


def _play_page(kind: str):
    """Return the template of the game's page in the browser, or None if it has none."""
    try:
        return get_template(f"games/{kind}/play.html")
    except TemplateDoesNotExist:
        return None


def games(request: HttpRequest) -> HttpResponse:
    """GET /games/?player=<nick>: the games in play and finished, newest first, of everyone or of one player."""
    nick = request.GET.get("player")
    player = None
    if nick:
        player = player_by_nick(nick)
        if player is None:
            raise Http404("No player with this nick")
    listed = selectors.started_games(player_id=player and player.pk)
    page = page_of(listed, request.GET.get("page"), GAMES_PER_PAGE)
    query = urlencode({"player": player.username}) + "&" if player else ""
    return render(request, "games/games.html", {"page": page, "player": player, "query": query, "section": "games"})


def _replay_data(game: Game, log: list) -> dict:
    """Return what a replay needs: the game's options, who sits where, the winner's seat and the log from the start
    on, each entry with the seat that made it."""
    seats = game.seat_user_ids
    engine = find_engine(game.kind)
    return {
        "game": game.public_id,
        "kind": game.kind,
        "options": game.options,
        # The position the log starts from, as the engine stores it (Fish: the board its seed deals).
        "start": engine.state_to_json(engine.new(len(seats), game.options, random.Random(0))),
        **game.options,
        "players": [user.username for user in game.players],
        "winner": seats.index(game.winner_id) if game.winner_id in seats else None,
        "log": [
            {
                "seq": event.seq,
                "kind": event.kind,
                "seat": seats.index(event.player_id) if event.player_id in seats else None,
                "data": event.data,
            }
            for event in log
            if event.kind != "create"
        ],
    }


def game(request: HttpRequest, public_id: str) -> HttpResponse:
    """GET /games/<id>/: a finished game with its log and its replay; a game in play, watched live."""
    found = selectors.game_with_log(public_id[:64])
    if found is None:
        raise Http404("No such game")
    log = list(found.events.all())
    for event in log:
        # Each entry's label needs its game's engine, not one more query.
        event.game = found
    seats = sorted(found.seats.all(), key=lambda seat: seat.index)
    context = {"game": found, "seats": seats, "title": found.title, "log": log, "section": "games"}
    context["table_url"] = table_url(found.kind, found.variant, found.pool)
    if found.started_at is not None and found.status == Game.Status.FINISHED:
        analysis = getattr(found, "analysis", None)
        context["replay"] = _replay_data(found, log)
        context["analysis_state"] = "pending" if analysis is None else analysis.state
        context["replay"]["analysis"] = analysis.data if context["analysis_state"] == "made" else None
    if found.status != Game.Status.FINISHED:
        # The live view's turn clock: the time left as the page is made (a game in play), then a whole turn from each
        # change on.
        context["turn_seconds"] = found.turn_seconds or settings.TAB_TURN_TIMEOUT
        if found.status == Game.Status.PLAYING and found.deadline is not None:
            context["turn_left_ms"] = max(0, round((found.deadline - timezone.now()).total_seconds() * 1000))
    return render(request, [f"games/{found.kind}/game.html", "games/game.html"], context)
