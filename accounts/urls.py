from django.urls import path

from . import views

urlpatterns = [
    path("account/sign-in", views.sign_in, name="sign-in"),
    path("account/sign-out", views.sign_out, name="sign-out"),
    path("account/sign-out-everywhere", views.sign_out_everywhere, name="sign-out-everywhere"),
    path("account/games", views.my_games, name="my-games"),
]
