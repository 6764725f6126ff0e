"""The analysis on every game's replay page, in a browser: the curve of chances under the board, the costliest turns
marked in the log and listed, the better turn shown on the board; and before it is made, a word that it is coming."""

import re

import pytest
from playwright.sync_api import expect

from .browser import WAIT_MS, recording_page
from .test_history_browser import CONTEXT

GAMES = {"tab": 2, "draughts": 2, "plakoto": 2, "fish": 3}


@pytest.fixture
def page(browser):
    with recording_page(browser, **CONTEXT) as page:
        yield page


@pytest.mark.parametrize("kind", sorted(GAMES))
def test_a_finished_games_page_shows_its_analysis(start_server, page, kind):
    server = start_server()
    game = server.manage(
        "shell",
        "-c",
        f"from tests.played import finished_game; print(finished_game({kind!r}, 11, {GAMES[kind]}).public_id)",
    ).split()[-1]
    page.goto(f"{server.url}/games/{game}/")
    expect(page.locator("#analysis")).to_contain_text("The computer is analysing this game")

    server.manage("analyse", "--positions", "5000")
    page.reload()
    curve = page.locator("#analysis-curve")
    expect(curve).to_be_visible()
    # One line for two players (the first one's chance), one a player for more.
    expect(curve.locator("polyline")).to_have_count(1 if GAMES[kind] == 2 else GAMES[kind])
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
        # The replay goes on from where the turn began, at a click on the curve.
        box = curve.bounding_box()
        curve.click(position={"x": 2, "y": box["height"] / 2})
        expect(page.locator("#replay-caption")).not_to_contain_text("The better turn")
    else:
        expect(marks.first).to_contain_text("No turn cost much")
    assert page.errors == []
