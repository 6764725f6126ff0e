"""The Fish page in a real Chromium against a real server: a tournament made in the browser, a seat taken, the
computer in the other, penguins placed and moved by clicks on the hex board; a TCP client of the protocol in the same
tournament sees every action, and a tournament made over TCP is joined in the browser. Spectators watch, and the
finished game is replayed on its page."""

import json
import time
import uuid

import pytest
from playwright.sync_api import Page, expect

from .fish_client import Client, Player

pytestmark = [pytest.mark.server, pytest.mark.browser]

WAIT_MS = 20_000


@pytest.fixture
def server(start_server):
    return start_server()


@pytest.fixture
def new_page(browser, server):
    contexts, errors = [], []

    def make(width: int = 1280, height: int = 900) -> Page:
        context = browser.new_context(viewport={"width": width, "height": height}, bypass_csp=True)
        contexts.append(context)
        page = context.new_page()
        page.on("pageerror", lambda error: errors.append(error))
        return page

    yield make
    assert not errors
    for context in contexts:
        context.close()


def click_tile(page: Page, row: int, col: int) -> None:
    box = page.locator("#board").bounding_box()
    x, y = page.evaluate(f"() => fishPage.tileCentre({row}, {col})")
    page.mouse.click(box["x"] + x, box["y"] + y)


def acted(page: Page, before: str) -> None:
    page.wait_for_function(f"() => JSON.stringify(fishPage.view().players) !== {before!r}", timeout=WAIT_MS)


def play_my_turn(page: Page) -> None:
    """Make one placement or move by clicks: a highlighted tile, or one of my penguins and then its first target."""
    page.wait_for_function("() => !fishPage.busy()", timeout=WAIT_MS)  # the last action's answer has come
    before = page.evaluate("() => JSON.stringify(fishPage.view().players)")
    view = page.evaluate("() => fishPage.view()")
    targets = page.evaluate("() => fishPage.targets()")
    click_tile(page, *targets[0])
    if view["phase"] == "movement":
        page.wait_for_function("() => fishPage.targets().length > 0", timeout=WAIT_MS)
        click_tile(page, *page.evaluate("() => fishPage.targets()")[0])
    acted(page, before)


def test_a_game_against_the_computer_by_clicks_seen_by_a_protocol_client(server, new_page):
    page = new_page()
    name = f"browser-{uuid.uuid4().hex[:8]}"
    page.goto(f"{server.url}/play/fish/?tournament={name}")
    page.select_option("#players", "3")
    page.get_by_role("button", name="Take a seat", exact=True).click()
    expect(page.locator("#seats")).to_contain_text("Red: ", timeout=WAIT_MS)
    expect(page.locator("#seats")).to_contain_text("(you)")
    # A client of the protocol takes the second seat over TCP; the computer the third.
    tcp = Player(Client(server.fish_port), name)
    assert tcp.color == "white"
    page.get_by_role("button", name="Let the computer take a seat").click()
    expect(page.locator("#state")).to_contain_text("Your turn (Red)", timeout=WAIT_MS)
    # A spectator's page follows along.
    spectator = new_page(390, 844)
    spectator.goto(f"{server.url}/play/fish/?tournament={name}")
    expect(spectator.locator("#state")).to_contain_text("Red to place", timeout=WAIT_MS)
    for _ in range(120):
        state = page.evaluate("() => fishPage.view()")
        if state["status"] == "finished":
            break
        if state["turn"] == "red":
            play_my_turn(page)
        elif state["turn"] == "white":
            before = page.evaluate("() => JSON.stringify(fishPage.view().players)")
            shown = tcp.state()
            if state["phase"] == "placement":
                free = [
                    (r, c)
                    for r, line in enumerate(shown["board"])
                    for c, fish in enumerate(line)
                    if fish and not any({"row": r, "col": c} in p["places"] for p in shown["players"])
                ]
                assert "result_state" in tcp.place(*free[0])
            else:
                move = tcp.ask("get_moves_for_color", color="white")["reachable_locations"][0]
                start, end = (move["start"]["row"], move["start"]["col"]), (move["end"]["row"], move["end"]["col"])
                assert "result_state" in tcp.move(start, end)
            # The page shows white's action (white may be on turn again, when the others cannot move).
            acted(page, before)
        else:
            # The computer's action shows (it may be on turn again, when the others cannot move).
            before = page.evaluate("() => JSON.stringify(fishPage.view().players)")
            if page.evaluate("() => fishPage.view().turn") == "brown":
                page.wait_for_function(
                    f"() => fishPage.view().turn !== 'brown' || JSON.stringify(fishPage.view().players) !== {before!r}",
                    timeout=WAIT_MS,
                )
    # What the page shows is what the protocol answers.
    view = page.evaluate("() => fishPage.view()")
    seen = tcp.state()
    assert view["board"] == seen["board"]
    assert [{k: p[k] for k in ("color", "score", "places")} for p in view["players"]] == seen["players"]
    final = json.dumps(view["board"], separators=(",", ":"))
    spectator.wait_for_function(f"() => JSON.stringify(fishPage.view().board) === {final!r}", timeout=WAIT_MS)
    # The spectator holds no seat, and is offered no move.
    assert spectator.evaluate("() => fishPage.held()") == []
    assert spectator.locator("#action-form").is_hidden()


def test_a_tournament_made_over_tcp_is_joined_in_the_browser_and_replayed(server, new_page):
    name = f"tcp-{uuid.uuid4().hex[:8]}"
    tcp = Player(Client(server.fish_port), name, players=2)
    page = new_page()
    # The page lists the tournaments waiting for players: one click opens it.
    page.goto(f"{server.url}/play/fish/")
    page.get_by_role("link", name=name).click()
    expect(page.locator("#seats")).to_contain_text("Red: a protocol client", timeout=WAIT_MS)
    page.get_by_role("button", name="Take a seat", exact=True).click()
    expect(page.locator("#state")).to_contain_text("Red to place", timeout=WAIT_MS)
    # Red errs: it is removed, and the page says so; white plays on alone to the end, by the keyboard's form.
    assert tcp.place(99, 0)["error_type"] == "Invalid_Coordinate"
    expect(page.locator("#seats")).to_contain_text("removed for a refused placement or move", timeout=WAIT_MS)
    # At most 4 placements and a move for each of the 36 tiles of ice.
    for _ in range(45):
        if page.evaluate("() => fishPage.view().status") == "finished":
            break
        expect(page.locator("#state")).to_contain_text("Your turn (White)", timeout=WAIT_MS)
        before = page.evaluate("() => JSON.stringify(fishPage.view().players)")
        page.get_by_role("button", name="Play it").click()
        acted(page, before)
    expect(page.locator("#state")).to_contain_text("White wins", timeout=WAIT_MS)
    page.get_by_role("link", name="Replay the game").click()
    expect(page.locator("#replay-caption")).to_contain_text("/", timeout=WAIT_MS)
    page.get_by_role("button", name="« Start").click()
    expect(page.locator("#replay-caption")).to_contain_text("The ice, before the first penguin")
    page.get_by_role("button", name="▶").click()
    expect(page.locator("#replay-caption")).to_contain_text("Red is removed, for a refused action")


def test_a_seat_whose_answer_comes_after_the_games_news_is_played_at_once(server, new_page):
    """The tournament's stream may tell of the game (started, then on the new player's turn) before the answer to the
    page's join comes with its token: the page then shows that it is the player's turn, and offers the moves."""
    name = f"late-{uuid.uuid4().hex[:8]}"
    tcp = Player(Client(server.fish_port), name, players=2)
    page = new_page()
    page.goto(f"{server.url}/play/fish/?tournament={name}")
    expect(page.locator("#seats")).to_contain_text("Red: a protocol client", timeout=WAIT_MS)
    joins = []
    page.route("**/tables/fish/request", lambda route: joins.append(route))
    page.get_by_role("button", name="Take a seat", exact=True).click()
    deadline = time.monotonic() + WAIT_MS / 1000
    while not joins:
        assert time.monotonic() < deadline, "the page sent no join"
        page.wait_for_timeout(20)
    answer = joins[0].fetch()  # the join is made; its answer is held back
    expect(page.locator("#state")).to_contain_text("Red to place", timeout=WAIT_MS)
    assert tcp.place(99, 0)["error_type"] == "Invalid_Coordinate"
    expect(page.locator("#state")).to_contain_text("White to place", timeout=WAIT_MS)
    joins[0].fulfill(response=answer)
    expect(page.locator("#state")).to_contain_text("Your turn (White)", timeout=WAIT_MS)
    expect(page.get_by_role("button", name="Play it")).to_be_visible(timeout=WAIT_MS)
    assert page.evaluate("() => fishPage.targets().length") > 0
