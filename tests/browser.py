"""The browser client under test: Debian's Chromium driven by Playwright, and a page object for the Tâb page.

Every game action is a real mouse click (or key press): on the sticks canvas, on the pass button, or on a board
cell whose position comes from the geometry the page exposes (`window.tab.cellCenter`). The page's read-only
`window.tab.state()` says what a player may do now, so that a test can choose a legal click, and when the page
has finished showing a change.
"""

import random
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from playwright.sync_api import Browser, Page, Playwright

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = Path("/usr/bin/chromium")
LAUNCH_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
]
SCREENSHOTS = ROOT / "var" / "screenshots"
WAIT_MS = 15_000

# What a page shows of a position: the pieces and, for some cells (by default the first and the last occupied),
# where they are drawn (as a fraction of the board canvas, 0,0 at the top left) and the colour of a pixel inside
# the piece's body, right of its centre, between its state ring and its rim (see board.js).
SIGHT = """(cells) => {
  const canvas = document.getElementById("board");
  const context = canvas.getContext("2d");
  const ratio = canvas.width / canvas.clientWidth;
  const board = tab.board();
  if (cells === null) {
    const occupied = board.flatMap((piece, cell) => (piece ? [cell] : []));
    cells = [occupied[0], occupied[occupied.length - 1]];
  }
  const seen = cells.map((cell) => {
    const rect = tab.cellRect(cell);
    const x = Math.round((rect.x + rect.w * 0.77) * ratio);
    const y = Math.round((rect.y + rect.h * 0.5) * ratio);
    return {
      cell,
      position: [(rect.x + rect.w / 2) / canvas.clientWidth, (rect.y + rect.h / 2) / canvas.clientHeight],
      pixel: Array.from(context.getImageData(x, y, 1, 1).data.slice(0, 3)),
    };
  });
  return { board, seen };
}"""

# Resolves to the page's state once it has shown every change (and, given a version, a newer frame), with the
# pieces and where to click now: the middle of the sticks, of the pass button, and of the cells in play.
IDLE = """(after) => {
  const state = tab.state();
  const newer = after === null || (state.version !== null && state.version > after) || state.phase === "over";
  if (state.busy || !newer) return false;
  const middle = (id) => {
    const box = document.getElementById(id).getBoundingClientRect();
    return box.width ? [box.x + box.width / 2, box.y + box.height / 2] : null;
  };
  const cells = {};
  for (const cell of [...state.movable, ...state.destinations]) {
    const { x, y } = tab.cellCenter(cell);
    cells[cell] = [x, y];
  }
  return { ...state, board: tab.board(), at: { sticks: middle("sticks"), pass: middle("pass"), cells } };
}"""


def launch(playwright: Playwright) -> Browser:
    return playwright.chromium.launch(executable_path=str(CHROMIUM), args=LAUNCH_ARGS)


@contextmanager
def recording_page(browser: Browser, **context) -> Iterator[Page]:
    """Open a page in a new context; the errors it meets (uncaught, or logged to the console) are in `page.errors`."""
    opened = browser.new_context(**context)
    page = opened.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on("console", lambda message: message.type == "error" and errors.append(message.text))
    page.errors = errors  # type: ignore[attr-defined]
    try:
        yield page
    finally:
        opened.close()


def screenshot(page: Page, name: str) -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    page.screenshot(path=str(path))
    return path


class TabPage:
    """One player's browser tab on the Tâb page."""

    def __init__(self, page: Page, base_url: str):
        self.page = page
        self.base_url = base_url
        self.errors: list[str] = []
        page.on("pageerror", lambda error: self.errors.append(str(error)))
        page.on("console", lambda message: message.type == "error" and self.errors.append(message.text))

    def open(self) -> "TabPage":
        self.page.goto(self.base_url + "/play/tab/")
        self.page.wait_for_function("window.tab !== undefined")
        return self

    # What the page shows ------------------------------------------------------------------------------

    def state(self) -> dict:
        return self.page.evaluate("tab.state()")

    def board(self) -> list:
        return self.page.evaluate("tab.board()")

    def sight(self, cells: list[int] | None = None) -> dict:
        """Return the pieces and, for each of `cells`, its drawn position and the colour drawn inside it."""
        return self.page.evaluate(SIGHT, cells)

    def position(self, cell: int) -> tuple[float, float]:
        x, y = self.sight([cell])["seen"][0]["position"]
        return x, y

    def wait_idle(self, *, after: int | None = None) -> dict:
        """Wait until the page has shown every change (and, with `after`, a frame newer than that version).

        Return the page's state, with the pieces under "board".
        """
        return self.page.wait_for_function(IDLE, arg=after, timeout=WAIT_MS).json_value()

    def wait_for(self, condition: str, arg=None) -> None:
        self.page.wait_for_function(condition, arg=arg, timeout=WAIT_MS)

    # Settings and identification ----------------------------------------------------------------------

    def configure(self, *, size: int, opponent: str, level: int = 1, first: str = "me", group: int = 1) -> None:
        page = self.page
        page.select_option("#speed", "instant")
        page.select_option("#size", str(size))
        page.click(f"label[for=opponent-{opponent}]")
        if opponent == "computer":
            page.click(f"label[for=first-{first}]")
            page.select_option("#level", str(level))
        else:
            page.fill("#group", str(group))

    def log_in(self, nick: str, password: str) -> None:
        page = self.page
        page.click("#login-open")
        page.fill("#nick", nick)
        page.fill("#password", password)
        page.click("#login-submit")
        page.wait_for_selector("#logged-in:not([hidden])")

    def start(self) -> None:
        self.page.click("#start")

    # Actions: real mouse clicks where the page draws things (no synthetic events, no shortcuts) ----------

    def click_cell(self, cell: int) -> None:
        center = self.page.evaluate("(cell) => tab.cellCenter(cell)", cell)
        self.page.mouse.click(center["x"], center["y"])

    def click_sticks(self) -> None:
        self._click_middle("#sticks")

    def _click_middle(self, selector: str) -> None:
        box = self.page.locator(selector).bounding_box()
        assert box is not None, f"{selector} is not shown"
        self.page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)

    def play_once(self, rng: random.Random, state: dict) -> str:
        """Make the next legal action of the player at this page by clicking; prefer captures. Return its kind.

        `state` is what `wait_idle` returned, with where to click.
        """
        mode = state["mode"]
        at = state["at"]
        if mode == "throw":
            point = at["sticks"]
        elif mode == "pass":
            point = at["pass"]
        elif mode == "choose-destination":
            destinations = state["destinations"]
            captures = [cell for cell in destinations if state["board"][cell] is not None]
            point = at["cells"][str(rng.choice(captures or destinations))]
        elif mode == "choose-piece":
            moves = state["moves"]
            captures = [move for move in moves if move["captures"]]
            point = at["cells"][str(rng.choice(captures or moves)["origin"])]
        else:
            raise AssertionError(f"nothing to play in mode {mode!r}: {state}")
        assert point is not None, f"nothing to click in mode {mode!r}"
        self.page.mouse.click(*point)
        return mode
