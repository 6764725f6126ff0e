from django.urls import path

from . import calls, pages

urlpatterns = [
    path("", pages.lobby, name="home"),
    path("games/", pages.games, name="games"),
    path("games/<str:public_id>/", pages.game, name="game"),
    path("games/<str:public_id>/result", calls.game_result, name="game-result"),
    # Each game's own page: its kind is any registered engine's.
    path("play/<slug:kind>/", pages.play, name="play"),
    # The pages' calls: invitations to a match between friends, rematches.
    path("play/invitations", calls.invitations_view, name="invitations"),
    path("play/invitations/<str:token>", calls.invitation, name="invitation"),
    path("play/invitations/<str:token>/<slug:answer>", calls.invitation_answer, name="invitation-answer"),
]
