from django.urls import path

from . import pages

urlpatterns = [
    path("games/", pages.games, name="games"),
    path("games/<str:public_id>/", pages.game, name="game"),
]
