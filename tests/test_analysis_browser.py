"""The analysis on every game's replay page, in a browser: the curve of chances under the board, the costliest turns
marked in the log and listed, the better turn shown on the board; and before it is made, a word that it is coming."""

import re

import pytest
from playwright.sync_api import expect

from .browser import WAIT_MS, recording_page
from .test_history_browser import CONTEXT

SEATS = {"tab": 2, "draughts": 2, "plakoto": 2, "fish": 3}


@pytest.fixture
def page(browser):
    with recording_page(browser, **CONTEXT) as page:
        yield page


def test_every_finished_games_page_shows_its_analysis(start_server, page):
    server = start_server()
    # One game of each kind, played through the services in one go (each command starts Django anew).
    made = ", ".join(f"finished_game({kind!r}, 11, {seats}).public_id" for kind, seats in SEATS.items())
    games = dict(
        zip(
            SEATS,
            server.manage("shell", "-c", f"from tests.played import finished_game; print({made})").split()[
                -len(SEATS) :
            ],
            strict=True,
        )
    )
    page.goto(f"{server.url}/games/{games['tab']}/")
    expect(page.locator("#analysis")).to_contain_text("The computer is analysing this game")

    server.manage("analyse", "--positions", "5000")
    for kind, game in games.items():
        page.goto(f"{server.url}/games/{game}/")
        curve = page.locator("#analysis-curve")
        expect(curve).to_be_visible()
        # One line for two players (the first one's chance), one a player for more.
        expect(curve.locator("polyline")).to_have_count(1 if SEATS[kind] == 2 else SEATS[kind])
        expect(page.locator("#analysis-now")).to_contain_text("Chances here:")
        how = "Judged by random playouts" if kind == "fish" else "Searched up to"
        expect(page.locator("#analysis-how")).to_contain_text(how)
        marks = page.locator("#analysis-marks li")
        expect(marks.first).to_be_visible()
        better = page.locator(".analysis-better")
        if better.count():
            # Each costly turn is marked in the log, and its better turn is shown on the board on request.
            assert page.locator("#log tr.is-costly").count() >= better.count()
            expect(curve.locator(".analysis-mark")).to_have_count(better.count())
            better.first.click()
            expect(page.locator("#replay-caption")).to_contain_text(re.compile("The better turn for"), timeout=WAIT_MS)
            # The replay goes on from where the curve is clicked.
            box = curve.bounding_box()
            curve.click(position={"x": 2, "y": box["height"] / 2})
            expect(page.locator("#replay-caption")).not_to_contain_text("The better turn")
        else:
            expect(marks.first).to_contain_text("No turn cost much")
    assert page.errors == []
