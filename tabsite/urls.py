from django.contrib import admin
from django.urls import include, path

from protocols.plakoto import views as plakoto_views

urlpatterns = [
    # The Tâb course's API: its functions at the root of the server, and the spectators' streams.
    path("", include("protocols.course_api.urls")),
    path("admin/", admin.site.urls),
    # The draughts rooms over the web (the page's transport; the line protocol has its own TLS server).
    path("draughts/", include("protocols.draughts.urls")),
    # The Plakoto course project's REST API, a table under each name.
    path("plakoto/", include("protocols.plakoto.urls")),
    path("tables/plakoto/<str:name>/computer", plakoto_views.computer, name="plakoto-computer"),
    path("tables/plakoto/<str:name>/seat/<str:colour>", plakoto_views.seat, name="plakoto-seat"),
    # The pages of rankings and game history, for graders, players and spectators; the lobby and each game's page.
    path("", include("rankings.urls")),
    path("", include("games.urls")),
]

handler400 = "tabsite.views.bad_request"
handler403 = "tabsite.views.permission_denied"
handler404 = "tabsite.views.not_found"
handler500 = "tabsite.views.server_error"
