"""The admin and the site's pages in a real Chromium against a real server: what an administrator reads after a game
played to its end on the board (no Save button on a game that cannot be changed, a link to the game's page, ratings as
numbers a person reads, an icon), how a game list says who won, and buttons that can be read."""

import random
import re

import pytest
from playwright.sync_api import expect

from .browser import WAIT_MS
from .live import Server, next_action

pytestmark = [pytest.mark.server, pytest.mark.browser]

PASSWORD = "secret"
ADMIN, ADMIN_PASSWORD = "root", "an admin's password"


def played_to_the_end(server: Server) -> tuple[str, str]:
    """Play a whole game of Tâb through the API with random legal actions; return its id and its winner."""
    for nick in ("alice", "bob"):
        assert server.call("register", nick=nick, password=PASSWORD) == (200, {})
    _, body = server.call("join", nick="alice", password=PASSWORD, group=3, size=7)
    server.call("join", nick="bob", password=PASSWORD, group=3, size=7)
    game, stream, rng = body["game"], server.stream("alice", body["game"]), random.Random(5)
    message = stream.next()
    while "winner" not in message:
        function, payload = next_action(message, rng)
        assert server.call(function, nick=message["turn"], password=PASSWORD, game=game, **payload)[0] == 200
        message = stream.next()
    stream.close()
    return game, message["winner"]


def create_superuser(server: Server) -> None:
    server.manage(
        "createsuperuser",
        "--noinput",
        f"--username={ADMIN}",
        "--email=root@localhost",
        DJANGO_SUPERUSER_PASSWORD=ADMIN_PASSWORD,
    )


def test_the_admin_and_the_games_list_after_a_game(start_server, browser):
    server = start_server()
    game, winner = played_to_the_end(server)
    create_superuser(server)
    context = browser.new_context(viewport={"width": 1200, "height": 900})
    page = context.new_page()
    missing: list[str] = []
    page.on("response", lambda response: response.status == 404 and missing.append(response.url))

    # The games list says who won and how, once each.
    page.goto(f"{server.url}/games/")
    result = page.locator(".games-table tbody tr").first.locator("td").last
    expect(result).to_have_text(f"{winner} won on the board", timeout=WAIT_MS)

    page.goto(f"{server.url}/admin/login/")
    page.fill("#id_username", ADMIN)
    page.fill("#id_password", ADMIN_PASSWORD)
    page.click("input[type=submit]")
    page.wait_for_url(re.compile(r"/admin/$"), timeout=WAIT_MS)

    # A game's page: everything read-only and nothing to save; a link to the game on the site.
    page.goto(f"{server.url}/admin/games/game/?q={game}")
    page.locator("#result_list tbody tr th a").first.click()
    expect(page.locator("#game_form")).to_be_visible(timeout=WAIT_MS)
    assert page.locator("input[name=_save], input[name=_continue], input[name=_addanother]").count() == 0
    view_on_site = page.get_by_role("link", name="View on site")
    expect(view_on_site).to_be_visible()
    view_on_site.click()
    page.wait_for_url(re.compile(rf"/games/{game}/$"), timeout=WAIT_MS)
    expect(page.locator("#result")).to_contain_text(f"{winner} won", timeout=WAIT_MS)

    # A game in play is ended from its own page, after a question.
    for nick in ("carol", "dave"):
        assert server.call("register", nick=nick, password=PASSWORD) == (200, {})
    _, body = server.call("join", nick="carol", password=PASSWORD, group=4, size=7)
    server.call("join", nick="dave", password=PASSWORD, group=4, size=7)
    page.goto(f"{server.url}/admin/games/game/?q={body['game']}")
    page.locator("#result_list tbody tr th a").first.click()
    page.get_by_role("link", name="End with no result").click()
    expect(page.locator("#content")).to_contain_text("It will count for no one.")
    page.get_by_role("button", name="Yes, end the game").click()
    expect(page.locator(".messagelist")).to_contain_text("1 game(s) ended.", timeout=WAIT_MS)
    expect(page.get_by_role("link", name="End with no result")).to_have_count(0)

    # Ratings in whole numbers, as the site shows them.
    page.goto(f"{server.url}/admin/rankings/rating/")
    ratings = page.locator("#result_list td.field-rating_shown").all_inner_texts()
    assert len(ratings) == 2 and all(re.fullmatch(r"\d{3,4}", rating) for rating in ratings), ratings

    # The icon, also for pages that name none.
    icon = page.request.get(f"{server.url}/favicon.ico")
    assert icon.ok and icon.headers["content-type"].startswith("image/svg+xml")
    assert not missing, missing
    context.close()


def contrast(first: tuple[int, ...], second: tuple[int, ...]) -> float:
    """WCAG's contrast ratio of two sRGB colours."""

    def luminance(colour: tuple[int, ...]) -> float:
        channels = [c / 255 for c in colour[:3]]
        linear = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
        return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]

    light, dark = sorted((luminance(first), luminance(second)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


def rgb(text: str) -> list[tuple[int, ...]]:
    return [tuple(int(part) for part in found.split(",")[:3]) for found in re.findall(r"rgba?\(([^)]*)\)", text)]


def test_the_buttons_of_a_page_not_found_can_be_read(start_server, browser):
    server = start_server()
    page = browser.new_page()
    page.goto(f"{server.url}/games/no-such-game/")
    buttons = page.locator(".row-buttons a.button").all()
    assert [button.inner_text() for button in buttons] == ["Rankings", "Games", "Play"]
    for button in buttons:
        style = button.evaluate(
            "(element) => { const s = getComputedStyle(element);"
            " return {color: s.color, image: s.backgroundImage, background: s.backgroundColor}; }"
        )
        (text,) = rgb(style["color"])
        backgrounds = rgb(style["image"]) or rgb(style["background"])
        assert backgrounds and all(contrast(text, back) >= 4.5 for back in backgrounds), (button.inner_text(), style)
    page.close()


OFF_SCREEN = """() => {
  for (const details of document.querySelectorAll("details")) details.open = true;
  return [...document.querySelectorAll("body *")]
    .filter((element) => {
      const box = element.getBoundingClientRect();
      return box.width > 0 && box.height > 0 && (box.right > innerWidth + 1 || box.left < -1);
    })
    .filter((element) => !element.closest(".table-scroll"))  // a wide table scrolls in its own box
    .map((element) => `${element.tagName.toLowerCase()}#${element.id}.${element.className}`);
}"""


# The words of a button or a label that do not fit in it (cut off, or spilling over the next one).
CLIPPED = """() => [...document.querySelectorAll("button, label, .button, .badge")]
  .filter((element) => element.offsetParent !== null && element.scrollWidth > element.clientWidth + 1)
  .map((element) => `${element.tagName.toLowerCase()}#${element.id}: ${element.textContent.trim().slice(0, 30)}`)"""


@pytest.mark.parametrize("width, height", [(390, 844), (360, 740)])
def test_no_page_runs_off_a_phone_screen(start_server, browser, width, height):
    server = start_server()
    context = browser.new_context(viewport={"width": width, "height": height}, is_mobile=True, has_touch=True)
    page = context.new_page()
    for path in (
        "/",
        "/games/",
        "/rankings/",
        "/play/tab/",
        "/play/draughts/",
        "/play/plakoto/",
        "/play/fish/",
        "/games/none/",
    ):
        page.goto(server.url + path)
        assert page.evaluate(OFF_SCREEN) == [], path
        assert page.evaluate(CLIPPED) == [], path
        assert page.evaluate("document.documentElement.scrollWidth") <= width, path
    context.close()
