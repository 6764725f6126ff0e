from django.urls import path

from . import pages

urlpatterns = [
    path("rankings/", pages.tables, name="rankings"),
    path("rankings/<int:group>/<int:size>/", pages.table, name="ranking"),
    path("rankings/<int:group>/<int:size>.csv", pages.table_csv, name="ranking-csv"),
    path("rankings/<slug:kind>/", pages.game_table, name="game-ranking"),
    path("rankings/<slug:kind>.csv", pages.game_table_csv, name="game-ranking-csv"),
    path("players/<path:nick>/", pages.player, name="player"),
]
