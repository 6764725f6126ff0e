from django.contrib import admin
from django.templatetags.static import static
from django.urls import include, path
from django.views.generic import RedirectView

from core import transports

urlpatterns = [
    # Each protocol's web transport, where its app mounts it (the Tâb course's API at the root, /draughts/, …).
    *transports.url_patterns(),
    path("admin/", admin.site.urls),
    # Browsers ask for it on pages that name no icon (the admin's, a JSON answer opened in a tab).
    path("favicon.ico", RedirectView.as_view(url=static("img/favicon.svg"), permanent=True)),
    # The pages of rankings and game history, for graders, players and spectators; the lobby and each game's page.
    path("", include("rankings.urls")),
    # Signing in to the site (a session), and the player's games in progress.
    path("", include("accounts.urls")),
    path("", include("games.urls")),
]

handler400 = "tabsite.views.bad_request"
handler403 = "tabsite.views.permission_denied"
handler404 = "tabsite.views.not_found"
handler500 = "tabsite.views.server_error"
