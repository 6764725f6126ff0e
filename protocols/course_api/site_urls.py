from django.urls import path

from . import site

# The functions a player plays with, for the site's own Tâb page (site.py), under /play/tab/api/.
urlpatterns = [
    path("join", site.join, name="site-join"),
    path("leave", site.leave, name="site-leave"),
    path("roll", site.roll, name="site-roll"),
    path("pass", site.pass_turn, name="site-pass"),
    path("notify", site.notify, name="site-notify"),
]
