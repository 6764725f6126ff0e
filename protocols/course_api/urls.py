from django.urls import path

from . import streams, views

# The course's functions live at the root of the server, as the course server's did.
functions = [
    path("register", views.register),
    path("join", views.join),
    path("leave", views.leave),
    path("roll", views.roll),
    path("pass", views.pass_turn),
    path("notify", views.notify),
    path("update", streams.update),
    path("ranking", views.ranking),
]
# A spectator's stream of a game: the same snapshots as the players' `update`.
spectators = [path("games/<str:public_id>/stream", streams.watch, name="game-stream")]

urlpatterns = functions + spectators
