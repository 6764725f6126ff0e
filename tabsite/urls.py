from django.contrib import admin
from django.urls import include, path
from django.views.generic import TemplateView

from accounts.views import register
from games import events
from games.views import join, leave, notify, pass_turn, roll
from rankings.views import ranking

# The course protocol's functions live at the root of the server.
urlpatterns = [
    path("register", register),
    path("join", join),
    path("leave", leave),
    path("roll", roll),
    path("pass", pass_turn),
    path("notify", notify),
    path("update", events.update),
    path("ranking", ranking),
    path("admin/", admin.site.urls),
    # The pages of rankings and game history, for graders, players and spectators.
    path("", include("rankings.urls")),
    path("", include("games.urls")),
    path("", TemplateView.as_view(template_name="index.html"), name="home"),
]

handler400 = "tabsite.views.bad_request"
handler403 = "tabsite.views.permission_denied"
handler404 = "tabsite.views.not_found"
handler500 = "tabsite.views.server_error"
