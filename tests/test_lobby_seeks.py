"""The lobby lists, under each game, the matches that wait for players, with the link that joins each."""

import re
from datetime import timedelta

import pytest
from django.test import Client

from protocols.fish import services as fish
from protocols.plakoto import services as plakoto
from protocols.plakoto.models import Table

pytestmark = pytest.mark.django_db


def items(page: str, kind: str) -> list[str]:
    found = re.search(rf'<ul class="seeks" id="{kind}-seeks">(.*?)</ul>', page, re.S)
    if found is None:
        return []
    return [" ".join(re.sub(r"<[^>]+>", " ", item).split()) for item in found.group(1).split("</li>")[:-1]]


def test_every_game_lists_its_matches_waiting_for_players(api, alice):
    api.as_player("alice")("join", group=8, size=9)
    fish.tournament_join(name="friday", players=3)
    plakoto.seat_take(name="green-table", colour="B", username="zoe")
    plakoto.seat_take(name="full-table", colour="W", username="ann")
    plakoto.seat_take(name="full-table", colour="B", username="ben")
    page = Client().get("/").content.decode()
    [tab] = items(page, "tab")
    assert tab.startswith("alice · group 8 · 9 columns ·") and tab.endswith("ago Play alice")
    assert 'href="/play/tab/?group=8&amp;size=9"' in page
    [tournament] = items(page, "fish")
    assert tournament.startswith("tournament friday · 1 of 3 players ·") and tournament.endswith("Join friday")
    assert 'href="/play/fish/?tournament=friday"' in page
    # A table with one seat taken waits; a full one plays.
    [table] = items(page, "plakoto")
    assert table.startswith("zoe · table green-table · plays Black ·") and table.endswith("Play zoe")
    assert 'href="/play/plakoto/?table=green-table"' in page
    assert items(page, "draughts") == []


def test_a_table_left_waiting_for_long_is_no_longer_offered():
    plakoto.seat_take(name="old-table", colour="W", username="zoe")
    Table.objects.update(last_change=Table.objects.get().last_change - plakoto.SEEK_FRESH - timedelta(seconds=1))
    assert items(Client().get("/").content.decode(), "plakoto") == []
