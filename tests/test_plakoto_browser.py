"""The Plakoto page in a real Chromium against a real server: a table opened, a seat taken, the computer in the
other, and moves made by clicking a point and its target on the canvas, through the table's REST API, whose other
clients see them."""

import re

import httpx
import pytest
from playwright.sync_api import Page, expect

pytestmark = [pytest.mark.server, pytest.mark.browser]

WAIT_MS = 20_000


@pytest.fixture
def page(browser, start_server):
    server = start_server()
    context = browser.new_context(viewport={"width": 1280, "height": 900}, bypass_csp=True)
    page = context.new_page()
    errors = []
    page.on("pageerror", lambda error: errors.append(error))
    page.server = server
    yield page
    assert not errors
    context.close()


def click_point(page: Page, point: int) -> None:
    box = page.locator("#board").bounding_box()
    x, y = page.evaluate(f"() => plakotoPage.pointCentre({point})")
    page.mouse.click(box["x"] + x, box["y"] + y)


# The first move the board shown offers, with the pieces' places then; null while it offers none.
MOVE_AND_PLACES = """() => {
  const board = plakotoPage.board;
  const moves = board.filter((c) => c.moves).flatMap((c) => c.moves.map((m) => [c.x, m.x]));
  return moves.length ? [JSON.stringify(board.map((c) => c.piece)), moves[0]] : null;
}"""


def test_a_game_against_the_computer_by_clicks(page):
    page.goto(page.server.url + "/play/plakoto/?table=browser")
    page.locator("#seat-W .seat-name").fill("alice")
    page.locator("#seat-W .seat-button").click()
    expect(page.locator("#seat-W .seat-user")).to_have_text("alice (you)", timeout=WAIT_MS)
    page.select_option("#computer-level", "1")
    page.get_by_role("button", name="Let the computer take the free seat").click()
    expect(page.locator("#state")).to_contain_text("Your turn", timeout=WAIT_MS)
    for _ in range(3):
        expect(page.locator("#state")).to_contain_text("Your turn", timeout=WAIT_MS)
        # A move of the board shown and the pieces' places, read at once: a refresh may replace the board between two
        # reads. Any move changes the places (the dice and the time may come out the same again).
        before, (origin, target) = page.wait_for_function(MOVE_AND_PLACES, timeout=WAIT_MS).json_value()
        click_point(page, origin)
        click_point(page, target)
        page.wait_for_function(
            f"() => JSON.stringify(plakotoPage.board.map((c) => c.piece)) !== {before!r}", timeout=WAIT_MS
        )
    # Another client of the API sees the same table.
    with httpx.Client(base_url=page.server.url) as api:
        (status,) = api.get("/plakoto/browser/status/").json()
        assert status["status"] == "started"
        seats = api.get("/plakoto/browser/players/").json()
        assert [seat["username"] for seat in seats] == ["computer (random)", "alice"]
    page.screenshot(path="var/screenshots/plakoto.png")


def test_a_second_player_at_another_browser(page, browser):
    page.goto(page.server.url + "/play/plakoto/?table=friends")
    page.locator("#seat-W .seat-name").fill("alice")
    page.locator("#seat-W .seat-button").click()
    expect(page.locator("#state")).to_contain_text("Waiting for a second player", timeout=WAIT_MS)
    other = browser.new_context(viewport={"width": 390, "height": 844}, bypass_csp=True)
    try:
        bob = other.new_page()
        bob.goto(page.server.url + "/play/plakoto/?table=friends")
        bob.locator("#seat-B .seat-name").fill("bob")
        bob.locator("#seat-B .seat-button").click()
        expect(bob.locator("#state")).to_contain_text("White to play", timeout=WAIT_MS)
        expect(page.locator("#state")).to_contain_text("Your turn", timeout=WAIT_MS)
        # Alice's page heard of Bob through the table's stream (it polls only every 15 s, in case a stream is cut).
        page.wait_for_function("window.plakotoPage.streamed?.status === 'started'", timeout=WAIT_MS)
    finally:
        other.close()


def test_a_finished_game_is_replayed_on_its_page(page):
    from .test_plakoto_api import moves_of, seated, status

    rng = __import__("random").Random(2)
    with httpx.Client(base_url=page.server.url + "/plakoto", timeout=30) as api:
        tokens = seated(api, "replayed")
        while (game := status(api, "replayed"))["status"] == "started":
            mover = tokens[game["p_turn"]]
            x, y, destination = rng.choice(moves_of(api, "replayed", mover))
            api.put(f"/replayed/board/piece/{x}/{y}/", json={"x": destination}, headers={"X-Token": mover})
        final = api.get("/replayed/board").json()
    listed = page.server.http.get("/games/").text
    (game_id,) = set(re.findall(r'href="/games/([0-9a-f]{32})/"', listed))
    page.goto(f"{page.server.url}/games/{game_id}/")
    expect(page.locator("#replay-caption")).to_contain_text(" / ", timeout=WAIT_MS)
    expect(page.locator("#log")).to_contain_text("rolled the dice")
    page.get_by_role("button", name="« Start").click()
    expect(page.locator("#replay-caption")).to_contain_text("0 / ")
    assert sum(cell["piece"] is not None for cell in final) <= 30
