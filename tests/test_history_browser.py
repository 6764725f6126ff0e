"""The replay and the live view in a real Chromium against a real server (uvicorn on a fresh database).

A game is played through the API while the players' stream records every snapshot; the replay, rebuilt in the
browser from the game's log, must show each of them, and its buttons must step through them. A game in play is
watched on its page, which follows the game's spectator stream and never the players' `update`.
"""

import random
import re

import pytest
from playwright.sync_api import expect

from .browser import WAIT_MS, recording_page, screenshot
from .live import Server, next_action

pytestmark = [pytest.mark.server, pytest.mark.browser]

PASSWORD = "secret"
# bypass_csp: the tests evaluate expressions in the pages, which their policy forbids (see the last test).
CONTEXT = {"viewport": {"width": 1100, "height": 900}, "reduced_motion": "reduce", "bypass_csp": True}


@pytest.fixture
def page(browser):
    with recording_page(browser, **CONTEXT) as page:
        yield page


def pair(server: Server) -> str:
    for nick in ("alice", "bob"):
        assert server.call("register", nick=nick, password=PASSWORD) == (200, {})
    _, body = server.call("join", nick="alice", password=PASSWORD, group=3, size=7)
    server.call("join", nick="bob", password=PASSWORD, group=3, size=7)
    return body["game"]


def play(server: Server, game: str, stream, rng, *, actions: int | None = None) -> dict[int, dict]:
    """Play random legal actions (all of the game, or `actions` of them); return each snapshot by version."""
    snapshots = {}
    message = stream.next()
    snapshots[int(stream.event_ids[-1])] = message
    while "winner" not in message and (actions is None or len(snapshots) <= actions):
        function, payload = next_action(message, rng)
        assert server.call(function, nick=message["turn"], password=PASSWORD, game=game, **payload)[0] == 200
        message = stream.next()
        snapshots[int(stream.event_ids[-1])] = message
    return snapshots


def test_the_replay_shows_every_position_of_a_finished_game(start_server, page):
    server = start_server()
    game = pair(server)
    stream = server.stream("alice", game)
    snapshots = play(server, game, stream, random.Random(11))
    stream.close()
    last = max(snapshots)

    page.goto(f"{server.url}/games/{game}/")
    page.wait_for_function("window.replay !== undefined")
    replay = "window.replay"
    # Step k of the replay is the position after log entry k + 1 (the creation is not replayed): version k + 1.
    assert page.evaluate(f"{replay}.steps()") == last
    rebuilt = page.evaluate(f"Array.from({{length: {replay}.steps()}}, (_, i) => {replay}.pieces(i))")
    for version, snapshot in snapshots.items():
        assert rebuilt[version - 1] == snapshot["pieces"], f"version {version}"
    assert page.evaluate(f"{replay}.step()") == 0
    expect(page.locator("#replay-caption")).to_contain_text("The start")
    screenshot(page, "replay-start")

    page.click("#replay-forward")
    page.click("#replay-forward")
    assert page.evaluate(f"{replay}.step()") == 2
    expect(page.locator("#log tr.is-current")).to_have_count(1)
    expect(page.locator("#log tr.is-current")).to_have_attribute("data-step", "2")
    # The caption and the log count the same steps; a move reads as rows and columns, not cell numbers.
    expect(page.locator("#replay-caption")).to_contain_text(f"Step 2 of {last - 1}:")
    expect(page.locator("#log tr.is-current td").first).to_have_text("2")
    moves = page.locator('#log tr[data-kind="move"] td.log-action').all_inner_texts()
    assert moves and all(re.match(r"moved from row [1-4], column \d+ to row [1-4], column \d+", move) for move in moves)
    page.click("#replay-back")
    assert page.evaluate(f"{replay}.step()") == 1
    page.click("#replay-last")
    assert page.evaluate(f"{replay}.step()") == last - 1
    assert page.evaluate(f"{replay}.board()") == snapshots[last]["pieces"]
    expect(page.locator("#replay-forward")).to_be_disabled()
    screenshot(page, "replay-end")

    # A row of the log jumps there; Play runs on from it by itself until paused.
    move = page.locator('#log tr[data-kind="move"]').nth(3)
    move.click()
    step = int(move.get_attribute("data-step"))
    assert page.evaluate(f"{replay}.step()") == step
    assert page.evaluate(f"{replay}.board()") == snapshots[step + 1]["pieces"]
    # Play's pace is chosen: slow, normal or fast.
    assert page.evaluate(f"{replay}.interval()") == 700
    page.select_option("#replay-speed", label="Fast")
    assert page.evaluate(f"{replay}.interval()") == 300
    page.click("#replay-play")
    page.wait_for_function(f"{replay}.step() >= {step + 2}", timeout=WAIT_MS)
    page.click("#replay-play")
    paused = page.evaluate(f"{replay}.step()")
    assert not page.evaluate(f"{replay}.playing()")
    page.wait_for_timeout(900)
    assert page.evaluate(f"{replay}.step()") == paused
    page.keyboard.press("Home")
    assert page.evaluate(f"{replay}.step()") == 0
    page.keyboard.press("ArrowRight")
    assert page.evaluate(f"{replay}.step()") == 1
    assert page.errors == []


def test_a_game_in_play_is_watched_live(start_server, page):
    server = start_server()
    game = pair(server)
    requested: list[str] = []
    page.on("request", lambda request: requested.append(request.url))
    stream = server.stream("alice", game)
    rng = random.Random(5)
    snapshots = play(server, game, stream, rng, actions=6)

    page.goto(f"{server.url}/games/{game}/")
    version = max(snapshots)
    page.wait_for_function(f"window.watch !== undefined && window.watch.version() === {version}", timeout=WAIT_MS)
    assert page.evaluate("window.watch.board()") == snapshots[version]["pieces"]
    expect(page.locator("#watch-status")).to_contain_text(f"{snapshots[version]['turn']} to play")
    # The turn's clock, counting down the time the player on turn has left.
    turn = snapshots[version]["turn"]
    expect(page.locator("#watch-clock")).to_have_text(re.compile(rf"^{turn} has \d+:\d\d left to play\.$"))

    # Each new action reaches the page.
    for _ in range(8):
        message = snapshots[version]
        function, payload = next_action(message, rng)
        assert server.call(function, nick=message["turn"], password=PASSWORD, game=game, **payload)[0] == 200
        message = stream.next()
        version = int(stream.event_ids[-1])
        snapshots[version] = message
        page.wait_for_function(f"window.watch.version() === {version}", timeout=WAIT_MS)
        assert page.evaluate("window.watch.board()") == message["pieces"]
        # The sticks of the throw on turn, drawn.
        expect(page.locator("#watch-dice .sticks")).to_have_count(1 if message.get("dice") else 0)
    # What happened since the page opened, newest first, in the replay's words.
    seen = page.locator("#watch-log li").all_inner_texts()
    assert any(re.fullmatch(r"(alice|bob) threw [12346]", line.strip()) for line in seen), seen
    assert all(
        re.fullmatch(
            r"(alice|bob) (threw [12346]|passed|moved from row \d, column \d to row \d, column \d)", line.strip()
        )
        for line in seen
    ), seen
    screenshot(page, "watch-live")

    assert server.call("leave", nick="alice", password=PASSWORD, game=game) == (200, {})
    # The end: the badge no longer says "Live", and the replay is a click away.
    expect(page.locator("#result .badge")).to_have_text("bob won", timeout=WAIT_MS)
    expect(page.locator("#watch-clock")).to_have_text("")
    assert page.evaluate("window.watch.message().winner") == "bob"
    page.click("#watch-status >> text=Replay every move")
    page.wait_for_function("window.replay !== undefined", timeout=WAIT_MS)
    expect(page.locator("#result")).to_contain_text("bob won")
    stream.close()
    assert any(url.endswith(f"/games/{game}/stream") for url in requested)
    assert not any("/update" in url for url in requested)
    assert page.errors == []


def test_the_pages_link_to_each_other(start_server, page):
    server = start_server()
    game = pair(server)
    assert server.call("roll", nick="alice", password=PASSWORD, game=game)[0] == 200  # played: the result counts
    server.call("leave", nick="bob", password=PASSWORD, game=game)
    page.goto(server.url + "/")
    page.click("#lobby >> text=Play Tâb")
    page.click(".topbar-links >> text=Rankings")
    page.click("text=Group 3")
    expect(page.locator("#ranking tbody tr")).to_have_count(2)
    screenshot(page, "ranking-table")
    page.click("#ranking >> text=alice")
    expect(page.locator("h1")).to_have_text("alice")
    page.click(".games-table a >> nth=0")
    expect(page.locator("#result")).to_contain_text("alice won")
    expect(page.locator("#result")).to_contain_text("A player left")
    screenshot(page, "game-page")
    assert page.errors == []


def test_the_pages_run_under_their_content_security_policy(start_server, browser):
    """Without the tests' bypass: every page's own scripts run, and the browser reports no violation of the policy."""
    server = start_server()
    game = pair(server)
    stream = server.stream("alice", game)
    play(server, game, stream, random.Random(5), actions=6)
    finished = pair_again(server)
    context = browser.new_context(viewport={"width": 1100, "height": 900})
    page = context.new_page()
    problems: list[str] = []
    page.on("pageerror", lambda error: problems.append(str(error)))
    page.on("console", lambda message: message.type in ("error", "warning") and problems.append(message.text))
    try:
        page.goto(f"{server.url}/")
        page.locator("#lobby").wait_for()
        page.goto(f"{server.url}/play/tab/")
        page.locator("#level option").first.wait_for(state="attached")  # the app's script filled the menu
        page.goto(f"{server.url}/games/{game}/")
        page.locator("#watch-status", has_text="to play").wait_for()  # the live view's script got the stream
        page.goto(f"{server.url}/games/{finished}/")
        page.locator("#replay-caption:not(:empty)").wait_for()  # the replay's script ran
        page.goto(f"{server.url}/rankings/")
    finally:
        context.close()
        stream.close()
    assert problems == []


def pair_again(server: Server) -> str:
    """A second game of alice and bob, finished (bob leaves): its page shows the replay."""
    _, body = server.call("join", nick="alice", password=PASSWORD, group=4, size=7)
    server.call("join", nick="bob", password=PASSWORD, group=4, size=7)
    assert server.call("leave", nick="bob", password=PASSWORD, game=body["game"]) == (200, {})
    return body["game"]


@pytest.mark.parametrize("width, height", [(390, 844), (360, 740)])
def test_a_list_of_games_shows_each_result_on_a_phone(start_server, browser, width, height):
    server = start_server()
    game = pair(server)
    # The game ends once a player has acted: bob wins, and the result says so.
    assert server.call("roll", nick="alice", password=PASSWORD, game=game)[0] == 200
    assert server.call("leave", nick="alice", password=PASSWORD, game=game) == (200, {})
    context = browser.new_context(viewport={"width": width, "height": height}, is_mobile=True, has_touch=True)
    page = context.new_page()
    for path in ("/games/", "/players/bob/"):
        page.goto(server.url + path)
        result = page.locator(".games-result").first
        expect(result).to_contain_text("bob won")
        box = result.bounding_box()
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= width, (path, box)
        assert page.evaluate("document.documentElement.scrollWidth") <= width, path
    context.close()
