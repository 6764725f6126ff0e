"""The browser client in a real Chromium against a real server (uvicorn on a fresh database).

Online games between two browser contexts and a game against the computer are played to the end by clicking
only; refusals, rejoining after a reload and quitting are checked on the page; screenshots of the main states
are saved to var/screenshots/ for people to look at.
"""

import random
import re

import httpx
import pytest
from playwright.sync_api import expect

from .browser import WAIT_MS, TabPage, screenshot
from .conftest import PASSWORDS

pytestmark = [pytest.mark.server, pytest.mark.browser]

DESKTOP = {"width": 1280, "height": 860}
PHONE = {"viewport": {"width": 390, "height": 844}, "device_scale_factor": 2, "is_mobile": True, "has_touch": True}
# The games are played with animations off (the page's own setting); the browser asks for reduced motion too.
# bypass_csp: the tests evaluate expressions in the pages, which their policy forbids (test_history_browser.py checks
# that the pages run under it).
CONTEXT = {"reduced_motion": "reduce", "locale": "en-GB", "timezone_id": "Europe/Lisbon", "bypass_csp": True}
MAX_ACTIONS = 2000


@pytest.fixture
def server(start_server):
    return start_server()


@pytest.fixture
def open_page(browser, server):
    """Open the Tâb page in a new browser context (a separate player, with its own storage)."""
    contexts = []

    def open_(**options) -> TabPage:
        context = browser.new_context(**{"viewport": DESKTOP, **CONTEXT, **options})
        contexts.append(context)
        return TabPage(context.new_page(), server.url).open()

    yield open_
    for context in contexts:
        context.close()


def color_seen(rgb: list[int]) -> str | None:
    red, _, blue = rgb
    if blue > red + 15:
        return "Blue"
    if red > blue + 30:
        return "Red"
    return None


def start_online_game(blue: TabPage, red: TabPage, *, size: int = 7, group: int = 5) -> None:
    """Log both players in and pair them: `blue` joins first, so it is the initial player."""
    blue.log_in("alice", PASSWORDS["alice"])
    red.log_in("bob", PASSWORDS["bob"])
    for page in (blue, red):
        page.configure(size=size, opponent="online", group=group)
    blue.start()
    blue.wait_for("tab.state().phase === 'waiting' && tab.state().game !== null")
    expect(blue.page.locator("#status")).to_contain_text("Waiting for an opponent")
    red.start()
    for page in (blue, red):
        page.wait_for("tab.state().phase === 'playing' && !tab.state().busy")
    assert blue.state()["me"] == "Blue"
    assert red.state()["me"] == "Red"


def settle(pages: list[TabPage], after: int | None) -> list[dict]:
    """Wait until every page has shown the frame after version `after`; return their states."""
    states = [page.wait_idle(after=after) for page in pages]
    assert len({state["version"] for state in states}) == 1, [state["version"] for state in states]
    return states


def check_drawn_boards(blue: TabPage, red: TabPage) -> None:
    """Both canvases show the same pieces where they should be: the board turned 180° for Red."""
    seen_by_blue, seen_by_red = blue.sight(), red.sight()
    board = seen_by_blue["board"]
    assert board == seen_by_red["board"]
    for on_blue, on_red in zip(seen_by_blue["seen"], seen_by_red["seen"], strict=True):
        assert on_blue["cell"] == on_red["cell"]
        (bx, by), (rx, ry) = on_blue["position"], on_red["position"]
        assert bx + rx == pytest.approx(1, abs=0.01)
        assert by + ry == pytest.approx(1, abs=0.01)
        expected = board[on_blue["cell"]]["color"]
        assert color_seen(on_blue["pixel"]) == expected, on_blue
        assert color_seen(on_red["pixel"]) == expected, on_red


def play_online_to_the_end(blue: TabPage, red: TabPage, rng: random.Random) -> int:
    """Play random legal clicks (captures first) on whichever page is on turn, until the game ends.

    After every action both pages hold the same pieces; after every move, their canvases are checked too.
    """
    pages = [blue, red]
    states = settle(pages, None)
    check_drawn_boards(blue, red)
    actions = 0
    fork_seen = False
    while not all(state["over"] for state in states):
        mover, state = (blue, states[0]) if states[0]["turn"] == "Blue" else (red, states[1])
        if state["mode"] == "choose-destination" and not fork_seen:
            fork_seen = True
            screenshot(mover.page, "online-fork-choice")
        if actions == 40:
            screenshot(blue.page, "online-in-progress-blue")
            screenshot(red.page, "online-in-progress-red")
        mover.play_once(rng, state)
        before = states[0]["board"]
        states = settle(pages, state["version"])
        assert states[0]["board"] == states[1]["board"]
        if states[0]["board"] != before:
            check_drawn_boards(blue, red)
        actions += 1
        assert actions < MAX_ACTIONS, "the game does not end"
    return actions


# In place of the browser's notifications, a list of what was notified; and a page that says it is hidden.
HIDDEN_WITH_NOTIFICATIONS = """() => {
  window.notified = [];
  window.Notification = class { constructor(title, { body }) { window.notified.push(body); } };
  window.Notification.permission = "granted";
  Object.defineProperty(document, "hidden", { get: () => true, configurable: true });
}"""


def test_two_players_play_a_whole_online_game_by_clicking(open_page):
    blue, red = open_page(), open_page()
    red.page.evaluate(HIDDEN_WITH_NOTIFICATIONS)
    start_online_game(blue, red)
    # The tab's title says whose turn it is; the player in another tab hears of the pairing.
    expect(blue.page).to_have_title(re.compile(r"^● Your turn · "))
    expect(red.page).to_have_title(re.compile(r"^alice's turn · "))
    assert red.page.evaluate("window.notified") == ["Game on against alice!"]
    board = blue.board()
    size = len(board) // 4
    # Each player's own pieces are at the bottom of their board.
    assert blue.position(0)[1] > 0.7 and blue.position(3 * size)[1] < 0.3
    assert red.position(3 * size)[1] > 0.7 and red.position(0)[1] < 0.3

    actions = play_online_to_the_end(blue, red, random.Random(3))
    notified = red.page.evaluate("window.notified")
    assert "Your turn against alice." in notified and notified[-1].startswith(("You won!", "alice won"))

    assert actions > 10
    results = {page.state()["me"]: page.state()["result"] for page in (blue, red)}
    assert sorted(results.values()) == ["loss", "win"]
    for page in (blue, red):
        result = page.state()["result"]
        end = page.page.locator("#end-screen")
        expect(end).to_be_visible()
        expect(end).to_have_attribute("data-result", result)
        expect(page.page.locator("#end-title")).to_have_text(
            "You won!" if result == "win" else "alice won" if page is red else "bob won"
        )
        screenshot(page.page, f"online-end-{result}")

    # The server's ranking for the group and size now counts the game.
    winner, nick = (blue, "alice") if results["Blue"] == "win" else (red, "bob")
    winner.page.click("#end-scores")
    winner.page.click("#tab-online")
    rows = winner.page.locator("#online-rows tr")
    expect(rows).to_have_count(2)
    expect(rows.first).to_contain_text(nick)
    screenshot(winner.page, "scoreboard-online")
    # The end card links to the game's page, which replays it.
    loser = red if winner is blue else blue
    game = loser.state()["game"]
    replay = loser.page.locator("#end-replay")
    expect(replay).to_have_attribute("href", f"/games/{game}/")
    replay.click()
    loser.page.wait_for_function("window.replay !== undefined", timeout=WAIT_MS)
    expect(loser.page.locator("#result")).to_contain_text(f"{nick} won")
    assert blue.errors == [] and red.errors == []


def test_a_game_against_the_computer_lands_in_the_local_scoreboard(open_page):
    player = open_page()
    player.configure(size=7, opponent="computer", level=1)
    # The levels are named for people, and each says what it does.
    levels = player.page.locator("#level option").all_inner_texts()
    assert levels == ["1 · Beginner", "2 · Casual", "3 · Strong"]
    expect(player.page.locator("#level-how")).to_have_text("Plays any move at random.")
    player.start()
    rng = random.Random(5)
    state = player.wait_idle()
    board_top = player.page.locator("#board").bounding_box()["y"]
    fork_seen = False
    actions = 0
    while not state["over"]:
        # Messages come and go above the board, which stays where it is.
        assert player.page.locator("#board").bounding_box()["y"] == board_top
        assert state["turn"] == state["me"], state
        if state["mode"] == "choose-destination" and not fork_seen:
            fork_seen = True
            screenshot(player.page, "computer-fork-choice")
        player.play_once(rng, state)
        state = player.wait_idle(after=state["version"])
        actions += 1
        assert actions < MAX_ACTIONS, "the game does not end"
        if actions == 6 and not state["over"]:
            # A reload goes on with the game where it was: nothing lost, and no way out of it either.
            board = player.board()
            player.page.reload()
            player.wait_for("window.tab !== undefined && tab.state().phase === 'playing'")
            state = player.wait_idle()
            assert player.board() == board and state["turn"] == state["me"]
            expect(player.page.locator("#notice")).to_contain_text("goes on where it was")

    result = state["result"]
    assert result in ("win", "loss")
    expect(player.page.locator("#end-screen")).to_have_attribute("data-result", result)
    expect(player.page.locator("#end-replay")).to_be_hidden()  # a game in the browser has no page on the server
    screenshot(player.page, f"computer-end-{result}")

    badge = "Won" if result == "win" else "Lost"
    player.page.click("#end-scores")
    rows = player.page.locator("#local-rows tr")
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text(badge)
    expect(player.page.locator("#local-played")).to_have_text("1")
    screenshot(player.page, "scoreboard-local")

    player.page.reload()
    player.wait_for("window.tab !== undefined")
    player.page.click("#open-scoreboard")
    expect(player.page.locator("#scoreboard")).to_be_visible()
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text(badge)
    expect(rows.first.locator("td").nth(2)).to_have_text("7")
    player.page.click("#tab-online")
    expect(player.page.locator("#online-status")).to_contain_text("No online games yet")
    assert player.errors == []


def test_refusals_rejoining_and_quitting(open_page):
    blue, red = open_page(), open_page()
    blue.click_cell(0)
    expect(blue.page.locator("#notice")).to_contain_text("No game yet")

    start_online_game(blue, red)
    version = blue.state()["version"]
    blue.click_cell(0)
    expect(blue.page.locator("#notice")).to_contain_text("Throw the sticks first")
    red.click_sticks()
    expect(red.page.locator("#notice")).to_contain_text("Not your turn")
    screenshot(red.page, "refused-not-your-turn")
    assert blue.state()["version"] == version

    blue.click_sticks()
    state = settle([blue, red], version)[0]
    # A piece that cannot move with this throw (or any click when no piece can move) is refused, with a reason.
    board = blue.board()
    stuck = [
        cell for cell, piece in enumerate(board) if piece and piece["color"] == "Blue" and cell not in state["movable"]
    ]
    blue.click_cell(stuck[0])
    expect(blue.page.locator("#notice")).not_to_be_empty()
    assert blue.state()["version"] == state["version"]

    # A reload keeps the player in the game (the session's cookie, and the game's id in sessionStorage).
    red.page.reload()
    red.wait_for("window.tab !== undefined && tab.state().phase === 'playing' && !tab.state().busy")
    assert red.state()["me"] == "Red"
    assert red.state()["version"] == state["version"]
    assert red.board() == blue.board()
    expect(red.page.locator("#user-nick")).to_have_text("bob")

    # Quitting a game in play asks first: "Keep playing" (the default) changes nothing.
    blue.page.click("#quit")
    expect(blue.page.locator("#confirm-quit")).to_be_visible()
    expect(blue.page.locator("#confirm-quit-detail")).to_contain_text("counts as a loss")
    blue.page.keyboard.press("Enter")
    expect(blue.page.locator("#confirm-quit")).to_be_hidden()
    assert blue.state()["phase"] == "playing"
    blue.page.click("#quit")
    blue.page.click("#confirm-quit-yes")
    for page in (blue, red):
        page.wait_for("tab.state().phase === 'over'")
    assert red.state()["result"] == "win"
    assert blue.state()["result"] == "loss"
    expect(red.page.locator("#end-title")).to_have_text("You won!")
    expect(red.page.locator("#end-detail")).to_have_text("alice left the game.")
    expect(red.page.locator("#status")).to_contain_text("alice left the game")
    expect(blue.page.locator("#end-title")).to_have_text("You left the game")
    # A rated game: each end card tells its player's rating before and after.
    expect(red.page.locator("#end-rating")).to_have_text(re.compile(r"^Your rating: 1500 → 1\d{3} \(\+\d+\)$"))
    expect(blue.page.locator("#end-rating")).to_have_text(re.compile(r"^Your rating: 1500 → 1\d{3} \(−\d+\)$"))
    screenshot(red.page, "online-end-opponent-left")
    # The game is over for good: a reload does not bring it back.
    red.page.reload()
    red.wait_for("window.tab !== undefined")
    assert red.state()["phase"] == "idle"


def test_keyboard_overlays_and_phone(open_page):
    desk = open_page()
    screenshot(desk.page, "start")
    desk.page.click("#open-instructions")
    expect(desk.page.locator("#instructions")).to_be_visible()
    screenshot(desk.page, "instructions")
    desk.page.keyboard.press("Escape")
    expect(desk.page.locator("#instructions")).to_be_hidden()

    # A game against the computer, by keyboard: Space on the sticks throws, Enter on the board moves.
    desk.configure(size=9, opponent="computer", level=3)
    desk.start()
    state = desk.wait_idle()
    while state["mode"] != "choose-piece":
        assert state["mode"] in ("throw", "pass"), state
        if state["mode"] == "throw":
            desk.page.locator("#sticks").focus()
            desk.page.keyboard.press("Space")
        else:  # after a throw by the keyboard that moves nothing, Pass has the focus: Enter passes
            expect(desk.page.locator("#pass")).to_be_focused()
            desk.page.keyboard.press("Enter")
        state = desk.wait_idle(after=state["version"])
    expect(desk.page.locator("#board")).to_be_focused()
    before = desk.board()
    desk.page.keyboard.press("Enter")
    state = desk.wait_idle(after=state["version"])
    assert desk.board() != before
    desk.page.keyboard.press("ArrowUp")
    expect(desk.page.locator("#board-cursor")).to_contain_text("Row 2")
    screenshot(desk.page, "computer-game-in-progress")
    desk.page.click("#open-scoreboard")
    screenshot(desk.page, "scoreboard-overlay")
    desk.page.keyboard.press("Escape")

    phone = open_page(**PHONE)
    screenshot(phone.page, "phone-start")
    phone.configure(size=9, opponent="computer", level=2)
    phone.start()
    state = phone.wait_idle()
    phone.click_sticks()
    phone.wait_idle(after=state["version"])
    screenshot(phone.page, "phone-game")
    assert desk.errors == [] and phone.errors == []


def test_logging_in_says_that_the_password_is_being_checked(open_page):
    player = open_page()
    page = player.page
    held = []  # the register request, held back: the server's slow password hash, as long as the test likes
    page.route("**/account/sign-in", lambda route: held.append(route))
    page.click("#login-open")
    page.fill("#nick", "alice")
    page.fill("#password", PASSWORDS["alice"])
    page.click("#login-submit")
    button = page.locator("#login-submit")
    expect(button).to_have_text("Checking…")
    expect(button).to_be_disabled()
    for _ in range(WAIT_MS // 50):  # the route takes the request as Playwright's events are handled
        if held:
            break
        page.wait_for_timeout(50)
    assert len(held) == 1
    held[0].continue_()
    page.wait_for_selector("#logged-in:not([hidden])")
    expect(button).to_have_text("Log in")
    expect(button).to_be_enabled()
    page.unroute("**/account/sign-in")
    assert player.errors == []


def test_a_player_waiting_in_the_lobby_is_joined_with_a_click(open_page, server):
    assert server.call("register", nick="alice", password=PASSWORDS["alice"]) == (200, {})
    _, body = server.call("join", nick="alice", password=PASSWORDS["alice"], group=8, size=9)
    bob = open_page()
    page = bob.page
    page.goto(server.url + "/")
    seeks = page.locator("#tab-seeks li")
    expect(seeks).to_have_count(1)
    expect(seeks.first).to_contain_text("alice · group 8 · 9 columns")
    seeks.first.get_by_role("link", name="Play alice").click()
    bob.wait_for("window.tab !== undefined")
    # Not logged in yet: the page asks, then joins alice's group and size at once.
    expect(page.locator("#login-popover")).to_be_visible()
    page.fill("#nick", "bob")
    page.fill("#password", PASSWORDS["bob"])
    page.click("#login-submit")
    bob.wait_for("tab.state().phase === 'playing' && !tab.state().busy")
    assert bob.state()["me"] == "Red" and bob.state()["game"] == body["game"]
    assert "group" not in page.url  # a reload does not join again
    page.goto(server.url + "/")
    expect(page.locator("#tab-seeks")).to_have_count(0)
    assert bob.errors == []


def test_a_player_stays_logged_in_and_resumes_a_game_from_another_tab_browser_or_device(open_page, browser, server):
    blue, red = open_page(), open_page()
    start_online_game(blue, red, group=12)
    game = blue.state()["game"]
    version = settle([blue, red], None)[0]["version"]

    # A new tab of the same browser: logged in, and the game is offered under "Your games", one click away.
    tab = TabPage(blue.page.context.new_page(), server.url).open()
    expect(tab.page.locator("#user-nick")).to_have_text("alice")
    expect(tab.page.locator("#notice")).to_contain_text("You have a game in progress against bob")
    entry = tab.page.locator("#my-games li")
    expect(entry).to_have_count(1)
    expect(entry).to_contain_text("Tâb · group 12 · 7 columns · against bob")
    entry.get_by_role("button", name="Resume your game against bob").click()
    state = tab.wait_idle(after=version - 1)
    assert (state["game"], state["me"], state["version"]) == (game, "Blue", version)
    expect(entry).to_contain_text("on the board")
    assert tab.page.evaluate("sessionStorage.getItem('tab.login')") is None  # no password kept in the browser

    # The browser restarted (its cookies kept): logged in; the game's link on the lobby resumes it at once.
    restarted = browser.new_context(storage_state=blue.page.context.storage_state(), viewport=DESKTOP, **CONTEXT)
    again = TabPage(restarted.new_page(), server.url)
    again.page.goto(server.url + "/")
    again.page.locator("#lobby-my-games li", has_text="against bob").get_by_role("link", name="Resume").click()
    again.page.wait_for_function("window.tab !== undefined")
    state = again.wait_idle(after=version - 1)
    assert (state["game"], state["me"], state["version"]) == (game, "Blue", version)

    # Another device: logged out until alice logs in there, then offered the game; she logs out everywhere.
    phone = open_page(**PHONE)
    expect(phone.page.locator("#login-open")).to_be_visible()
    phone.log_in("alice", PASSWORDS["alice"])
    # Logged in, the phone's page is where it was: not shifted, nothing past its edges.
    assert phone.page.evaluate("[window.scrollX, document.documentElement.scrollWidth]") == [0, 390]
    box = phone.page.locator("#logout").bounding_box()
    assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 390
    expect(phone.page.locator("#my-games li")).to_contain_text("against bob")
    phone.page.click("#logout-everywhere")
    expect(phone.page.locator("#login-open")).to_be_visible()
    for page in (tab, again):
        page.page.reload()
        page.page.wait_for_function("window.tab !== undefined")
        expect(page.page.locator("#login-open")).to_be_visible()
        expect(page.page.locator("#account-card")).to_be_hidden()
    # The game itself goes on, for bob and for alice once she logs in again.
    tab.log_in("alice", PASSWORDS["alice"])
    tab.page.locator("#my-games").get_by_role("button").click()
    assert tab.wait_idle(after=version - 1)["game"] == game
    restarted.close()
    assert blue.errors == [] and tab.errors == [] and again.errors == [] and phone.errors == []


def test_friends_play_by_an_invitation_link_then_a_rematch(open_page):
    alice, bob = open_page(), open_page()
    alice.log_in("alice", PASSWORDS["alice"])
    alice.configure(size=7, opponent="online", group=21)
    alice.page.click("#invite")
    link = alice.page.locator("#invite-link")
    expect(link).to_have_value(re.compile(r"/play/tab/\?invite=[0-9a-f]{32}$"))
    expect(alice.page.locator("#invite-status")).to_contain_text("Waiting for your friend")

    # bob opens the link, logged out: he sees the invitation, logs in when he accepts, and the game starts for both.
    bob.page.goto(link.input_value())
    bob.page.wait_for_function("window.tab !== undefined")
    expect(bob.page.locator("#invite-what")).to_have_text(
        "alice invites you to a game of Tâb on 7 columns, in group 21."
    )
    bob.page.click("#invite-accept")
    expect(bob.page.locator("#login-popover")).to_be_visible()
    bob.page.fill("#nick", "bob")
    bob.page.fill("#password", PASSWORDS["bob"])
    bob.page.click("#login-submit")
    for page in (alice, bob):
        page.wait_for("tab.state().phase === 'playing' && !tab.state().busy")
        expect(page.page.locator("#invite-card")).to_be_hidden()
    first = alice.state()["game"]
    assert bob.state()["game"] == first
    assert (alice.state()["me"], bob.state()["me"]) == ("Blue", "Red")  # the inviter plays first

    # alice resigns; bob offers a rematch from the end card, alice sees the offer there and takes it.
    alice.page.click("#quit")
    alice.page.click("#confirm-quit-yes")
    for page in (alice, bob):
        page.wait_for("tab.state().phase === 'over'")
        expect(page.page.locator("#end-rematch")).to_be_visible()
    bob.page.click("#end-rematch")
    expect(bob.page.locator("#end-rematch-status")).to_have_text("Waiting for alice to accept…")
    expect(alice.page.locator("#end-rematch-status")).to_have_text("bob offers a rematch.")
    expect(alice.page.locator("#end-rematch")).to_have_text("Accept rematch")
    alice.page.click("#end-rematch")
    for page in (alice, bob):
        page.wait_for(f"tab.state().phase === 'playing' && tab.state().game !== '{first}' && !tab.state().busy")
    assert alice.state()["game"] == bob.state()["game"] != first
    assert (alice.state()["me"], bob.state()["me"]) == ("Red", "Blue")  # who played second begins
    assert alice.errors == [] and bob.errors == []


OVERLAPS = """() => {
  const card = document.querySelector("#end-screen .end-card").getBoundingClientRect();
  return ["player-top", "player-bottom", "sticks", "board"].filter((id) => {
    const box = document.getElementById(id).getBoundingClientRect();
    return box.left < card.right && card.left < box.right && box.top < card.bottom && card.top < box.bottom;
  });
}"""


@pytest.mark.parametrize("size", [{"width": 390, "height": 844}, {"width": 360, "height": 740}])
def test_on_a_phone_the_end_card_hides_neither_the_board_nor_the_players_nor_the_sticks(open_page, size):
    phone = open_page(**{**PHONE, "viewport": size})
    phone.configure(size=9, opponent="computer", level=1)
    phone.start()
    phone.wait_idle()
    phone.page.click("#quit")
    phone.page.click("#confirm-quit-yes")
    expect(phone.page.locator("#end-screen")).to_be_visible()
    assert phone.page.evaluate(OVERLAPS) == []
    assert phone.page.locator("#end-again").is_visible()
    assert phone.errors == []


def test_an_invitation_is_withdrawn_when_its_player_logs_out_or_starts_another_game(open_page, server):
    alice = open_page()
    alice.log_in("alice", PASSWORDS["alice"])
    alice.configure(size=7, opponent="online", group=22)
    tokens = []
    for leave in ("log out", "play the computer"):
        alice.page.click("#invite")
        link = alice.page.locator("#invite-link")
        expect(link).to_have_value(re.compile(r"invite=[0-9a-f]{32}$"))
        tokens.append(link.input_value().rsplit("=", 1)[1])
        if leave == "log out":
            alice.page.click("#logout")
            expect(alice.page.locator("#login-open")).to_be_visible()
            alice.log_in("alice", PASSWORDS["alice"])
        else:
            alice.configure(size=7, opponent="computer")
            alice.start()
            alice.wait_for("tab.state().phase === 'playing'")
        expect(alice.page.locator("#invite-card")).to_be_hidden()
        status = lambda: httpx.get(f"{server.url}/play/invitations/{tokens[-1]}").json()["status"]  # noqa: E731
        for _ in range(WAIT_MS // 100):  # the page withdraws it in the background
            if status() == "cancelled":
                break
            alice.page.wait_for_timeout(100)
        assert status() == "cancelled", leave
    assert alice.errors == []


def test_a_level_saved_before_the_levels_were_three_is_the_hardest_now(open_page):
    player = open_page()
    player.configure(size=7, opponent="computer", level=2)
    player.start()
    player.wait_idle()
    # What the page saved when it had five levels: the settings, and the game in play against level 5.
    player.page.evaluate(
        """() => {
          const game = JSON.parse(sessionStorage.getItem("tab.local"));
          sessionStorage.setItem("tab.local", JSON.stringify({ ...game, level: 5 }));
          const settings = JSON.parse(localStorage.getItem("tab.settings.v1"));
          localStorage.setItem("tab.settings.v1", JSON.stringify({ ...settings, level: 5 }));
        }"""
    )
    player.page.reload()
    player.wait_for("window.tab !== undefined && tab.state().phase === 'playing'")
    expect(player.page.locator("#level")).to_have_value("3")
    expect(player.page.locator("#notice")).to_contain_text("(Strong) goes on where it was")
    assert player.errors == []
