"""The history pages: the games that were played, one game with its log and replay (or, in play, watched live)."""

from urllib.parse import urlencode

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render

from core.pagination import page_of
from rankings.selectors import player_by_nick

from . import selectors
from .models import Game
from .rules import tab

GAMES_PER_PAGE = 50


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
    """Return what the replay needs: the board size, who plays which colour and the log from the start on."""
    colors = {game.initial_player_id: tab.BLUE, game.second_player_id: tab.RED}
    return {
        "game": game.public_id,
        "size": game.size,
        "players": {tab.BLUE: game.initial_player.username, tab.RED: game.second_player.username},
        "winner": colors.get(game.winner_id),
        "log": [
            {"seq": event.seq, "kind": event.kind, "color": colors.get(event.player_id), "data": event.data}
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
    context = {"game": found, "log": log, "blue": tab.BLUE, "red": tab.RED, "section": "games"}
    if found.started_at is not None and found.status == Game.Status.FINISHED:
        context["replay"] = _replay_data(found, log)
    return render(request, "games/game.html", context)
