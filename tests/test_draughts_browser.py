"""The draughts page in a real Chromium against a real server: rooms made and joined in the browser and by line
clients, moves by click and by drag (a capture square by square), clocks, draw offers, the computer, spectators and
the replay. Every move is a real pointer action on the canvas, at the square's place on the board."""

import re

import pytest
from playwright.sync_api import Page, expect

from .draughts_client import Client

pytestmark = [pytest.mark.server, pytest.mark.browser]

DESKTOP = {"width": 1280, "height": 900}
PHONE = {"viewport": {"width": 390, "height": 844}, "device_scale_factor": 2, "is_mobile": True, "has_touch": True}
CONTEXT = {"locale": "en-GB", "bypass_csp": True}
WAIT_MS = 20_000


@pytest.fixture
def server(start_server):
    return start_server()


@pytest.fixture
def open_page(browser, server):
    contexts = []

    def open_(path: str = "/play/draughts/", **options) -> Page:
        context = browser.new_context(**{"viewport": DESKTOP, **CONTEXT, **options})
        contexts.append(context)
        page = context.new_page()
        errors = []
        page.on("pageerror", lambda error: errors.append(error))
        page.errors = errors
        page.goto(server.url + path)
        return page

    yield open_
    for context in contexts:
        assert all(not page.errors for page in context.pages), [page.errors for page in context.pages]
        context.close()


def square_point(page: Page, name: str) -> tuple[float, float]:
    """Return where the square `name` is on the screen, from the board's size and which side is at the bottom."""
    box = page.locator("#board").bounding_box()
    bottom = page.locator("#board").get_attribute("data-bottom")
    inner = page.evaluate("() => { const c = document.getElementById('board'); return [c.clientLeft, c.clientWidth]; }")
    border, width = inner
    size = width / 8
    column, row = "abcdefgh".index(name[0]), int(name[1])
    if bottom == "b":
        column, row = 7 - column, 9 - row
    return box["x"] + border + (column + 0.5) * size, box["y"] + border + (8 - row + 0.5) * size


def click_move(page: Page, *squares: str) -> None:
    for name in squares:
        page.mouse.click(*square_point(page, name))


def drag_move(page: Page, start: str, end: str) -> None:
    page.mouse.move(*square_point(page, start))
    page.mouse.down()
    x, y = square_point(page, end)
    page.mouse.move(x, y, steps=8)
    page.mouse.up()


def board_of(page: Page) -> str:
    return page.locator("#board").get_attribute("data-board") or ""


def wait_board(page: Page, board: str) -> None:
    expect(page.locator("#board")).to_have_attribute("data-board", board, timeout=WAIT_MS)


def colour_of(page: Page) -> str:
    text = page.locator("#you").text_content()
    return "w" if "white" in text else "b"


def make_room(page: Page) -> tuple[str, str, str]:
    """Make a room in the page; return the invitation link, the room's UUID and the other colour's UUID."""
    page.get_by_role("button", name="Make a room").click()
    expect(page.locator("#invite")).to_be_visible(timeout=WAIT_MS)
    link = page.locator("#invite-link").input_value()
    return link, page.locator("#room-id").text_content(), page.locator("#enemy-key").text_content()


AFTER_C3_D4 = "0b0b0b0bb0b0b0b00b0b0b0b00000000000w0000w000w0w00w0w0w0ww0w0w0w0"


def test_two_browsers_play_by_a_link_with_clicks_drags_a_capture_and_a_draw(open_page, server):
    first = open_page()
    link, room_id, _ = make_room(first)
    expect(first.locator("#state")).to_have_text(re.compile("Waiting for your opponent"))
    second = open_page(link.removeprefix(server.url))
    for page in (first, second):
        expect(page.locator("#state")).to_contain_text("move", timeout=WAIT_MS)
    white, black = (first, second) if colour_of(first) == "w" else (second, first)
    assert colour_of(black) == "b"
    expect(white.locator("#state")).to_have_text("Your move.")
    click_move(white, "c3", "d4")
    wait_board(black, AFTER_C3_D4)
    drag_move(black, "d6", "e5")
    wait_board(white, "0b0b0b0bb0b0b0b00b000b0b0000b000000w0000w000w0w00w0w0w0ww0w0w0w0")
    click_move(white, "g3", "h4")
    expect(black.locator("#state")).to_have_text("Your move.", timeout=WAIT_MS)
    # Capturing is compulsory: a click on another piece selects nothing; the capture is made by clicks.
    click_move(black, "b6", "a5")
    assert board_of(black) == "0b0b0b0bb0b0b0b00b000b0b0000b000000w000ww000w0000w0w0w0ww0w0w0w0"
    click_move(black, "e5", "c3")
    wait_board(white, "0b0b0b0bb0b0b0b00b000b0b000000000000000ww0b0w0000w0w0w0ww0w0w0w0")
    # Both clocks are shown; the running one ticks.
    clock = white.locator("#clock-white .clock-time")
    before = clock.text_content()
    expect(clock).not_to_have_text(before, timeout=WAIT_MS)
    # A draw offered, withdrawn, offered again and accepted.
    black.get_by_role("button", name="Offer a draw").click()
    expect(white.locator("#draw-offered")).to_be_visible(timeout=WAIT_MS)
    black.get_by_role("button", name="Withdraw your offer").click()
    expect(white.locator("#draw-offered")).to_be_hidden(timeout=WAIT_MS)
    black.get_by_role("button", name="Offer a draw").click()
    expect(white.get_by_role("button", name="Accept the draw")).to_be_visible(timeout=WAIT_MS)
    white.get_by_role("button", name="Accept the draw").click()
    for page in (white, black):
        expect(page.locator("#state")).to_have_text("The game is drawn.", timeout=WAIT_MS)
    # The game's page: the result and its replay.
    white.locator("#history").click()
    expect(white.locator("#result")).to_contain_text("Drawn")
    expect(white.locator("#replay-caption")).to_contain_text("4 / 4", timeout=WAIT_MS)
    white.get_by_role("button", name="« Start").click()
    expect(white.locator("#replay-caption")).to_contain_text("0 / 4")
    assert board_of(white).startswith("0b0b0b0bb0b0b0b0")


def test_a_line_client_joins_a_room_made_in_the_browser_and_a_spectator_watches(open_page, server):
    page = open_page()
    _, room_id, enemy = make_room(page)
    client = Client(server.draughts_port)
    assert client.say(f"JOIN {room_id} {enemy}") == "ROOM_JOINED"
    mine = colour_of(page)
    game = client.state()
    assert game["STATE"] == "PLAYING"
    game_id = page.evaluate("() => draughtsPage.view.game")
    spectator = open_page(f"/games/{game_id}/")
    if mine == "w":
        # The page learns of the opponent's coming by its stream: it lets white move once it knows.
        expect(page.locator("#state")).to_have_text("Your move.", timeout=WAIT_MS)
        click_move(page, "c3", "d4")
        wait_board(page, AFTER_C3_D4)
        assert client.state()["BOARD"] == AFTER_C3_D4
        assert client.say("MOVE f6 g5") == "MOVE_OK"
        expected = "0b0b0b0bb0b0b0b00b0b000b000000b0000w0000w000w0w00w0w0w0ww0w0w0w0"
    else:
        assert client.say("MOVE c3 d4") == "MOVE_OK"
        expected = AFTER_C3_D4
    wait_board(page, expected)
    expect(page.locator("#state")).to_have_text("Your move.", timeout=WAIT_MS)
    wait_board(spectator, expected)
    expect(spectator.locator("#watch-status")).to_contain_text("to move")
    client.close()


def test_the_browser_joins_a_room_made_by_a_line_client(open_page, server):
    client = Client(server.draughts_port)
    made = client.variables(client.say("CREATE"))
    page = open_page(f"/play/draughts/?room={made['ROOM_ID']}#key={made['ENEMY_COLOR_ID']}")
    expect(page.locator("#state")).to_contain_text("move", timeout=WAIT_MS)
    state = client.state()
    assert state["STATE"] == "PLAYING" and state["WHITE_ONLINE"] == state["BLACK_ONLINE"] == "TRUE"
    # The key is not left in the address bar; a reload comes back to the room with the stored key.
    assert "key=" not in page.url
    page.reload()
    expect(page.locator("#state")).to_contain_text("move", timeout=WAIT_MS)
    # By hand, with the UUIDs: a room and a colour that are not one give a clear message.
    other = open_page()
    other.fill("#join-room", made["ROOM_ID"])
    other.fill("#join-key", made["ROOM_ID"])
    other.get_by_role("button", name="Join").click()
    expect(other.locator("#message")).to_contain_text("colour", timeout=WAIT_MS)
    client.close()


def test_a_game_against_the_computer_on_a_phone(open_page):
    page = open_page(**PHONE)
    page.select_option("#computer-level", "1")
    page.select_option("#computer-colour", "b")
    page.get_by_role("button", name="Play the computer").click()
    # The computer plays white's first move; then it is ours.
    expect(page.locator("#state")).to_have_text("Your move.", timeout=WAIT_MS)
    assert board_of(page) != "0b0b0b0bb0b0b0b00b0b0b0b0000000000000000w0w0w0w00w0w0w0ww0w0w0w0"
    assert page.locator("#board").get_attribute("data-bottom") == "b"
    version = page.evaluate("() => draughtsPage.view.version")
    moves = page.evaluate("() => draughtsPage.board.state.legalMoves().map((m) => m.path.length)")
    assert moves
    path = page.evaluate(
        "() => draughtsPage.board.state.legalMoves()[0].path.map((s) => 'abcdefgh'[s % 8] + (8 - Math.floor(s / 8)))"
    )
    for name in path:
        x, y = square_point(page, name)
        page.touchscreen.tap(x, y)
    page.wait_for_function(f"() => draughtsPage.view.version > {version + 1}", timeout=WAIT_MS)
    expect(page.locator("#state")).to_have_text("Your move.", timeout=WAIT_MS)
