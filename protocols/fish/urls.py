from django.urls import path

from . import web

# What the Fish page calls (mounted at /tables/fish/). "_game", "request" and "waiting" are no tournament's path: a
# tournament's paths have two parts.
urlpatterns = [
    path("request", web.request_view, name="fish-request"),
    path("waiting", web.waiting, name="fish-waiting"),
    path("_game/<str:public_id>", web.tournament_of_game, name="fish-tournament-of-game"),
    path("<str:name>/view", web.view, name="fish-view"),
    path("<str:name>/stream", web.stream, name="fish-stream"),
    path("<str:name>/computer", web.computer, name="fish-computer"),
]
