from django.urls import path

from . import pages

urlpatterns = [
    path("", pages.lobby, name="home"),
    path("games/", pages.games, name="games"),
    path("games/<str:public_id>/", pages.game, name="game"),
    # Each game's own page: its kind is any registered engine's.
    path("play/<slug:kind>/", pages.play, name="play"),
]
