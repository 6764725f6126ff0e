// The Plakoto page: open a table, take a seat (or give the free one to the computer), and play on a canvas
// backgammon board through the table's REST API (/plakoto/<table>/, the same services as every client of it).
// The page follows the table's stream (its status at every change, the table's or its game's) and reads the board when
// it changed; it also polls now and then, as the API's clients do, in case the stream is cut by something between.

import { State, WHITE } from "../rules/plakoto.js";
import { PlakotoBoard } from "./board.js";

const $ = (id) => document.getElementById(id);
const POLL_MS = 15000;
const STORED = "plakoto-seat:";

const page = {
  table: null, // the table's name
  seat: null, // {colour, token} of this browser's seat, if any
  status: null,
  state: null, // a rules State rebuilt from the board and the status
  board: null, // the board's cells as the API sent them
  selected: null, // the point chosen to move from
  stream: null, // the EventSource of the table's stream
  streamed: null, // the last status it sent
};
window.plakotoPage = page;

async function api(path, { method = "GET", body = null, token = null } = {}) {
  const headers = {};
  if (body !== null) headers["Content-Type"] = "application/json";
  if (token) headers["X-Token"] = token;
  const response = await fetch(`/plakoto/${page.table}/${path}`, {
    method,
    headers,
    body: body === null ? undefined : JSON.stringify(body),
  });
  const data = await response.json().catch(() => ({ errormesg: `The server answered ${response.status}` }));
  if (!response.ok) throw new Error(data.errormesg || `The server answered ${response.status}`);
  return data;
}

function say(text, kind = "info") {
  $("message").textContent = text;
  $("message").dataset.kind = kind;
}

const name = (colour) => (colour === WHITE ? "White" : "Black");

/** Rebuild the rules' state from the API's board and status (the page checks nothing the server does not). */
function stateOf(cells, status) {
  const state = new State();
  for (const cell of cells) {
    if (cell.piece) state.points[cell.x][cell.y - 1] = [cell.piece_color, Number(cell.piece.slice(1))];
  }
  for (const colour of ["W", "B"]) {
    const onBoard = new Set(cells.filter((cell) => cell.piece_color === colour).map((cell) => cell.piece));
    for (let number = 1; number <= 15; number++) if (!onBoard.has(`P${number}`)) state.off[colour].push(number);
  }
  state.turn = status.status === "started" ? status.p_turn : null;
  state.dice = status.dice;
  state.diceLeft = status.dice_left || [];
  state.rollDue = false;
  state.result = status.result;
  return state;
}

async function refresh(force = false) {
  if (!page.table) return;
  try {
    const [status] = await api("status/");
    const changed = force || !page.status || JSON.stringify(status) !== JSON.stringify(page.status);
    page.status = status;
    if (changed) {
      page.board = await api("board/", { token: page.seat && page.seat.token });
      page.state = stateOf(page.board, status);
      const seats = await api("players/");
      showSeats(seats);
      // A chosen piece stays chosen through a refresh, as long as it may still move.
      if (page.selected !== null && !targetsOf(page.selected).length) page.selected = null;
    }
    showStatus();
    draw();
  } catch (error) {
    say(error.message, "error");
  }
}

function showSeats(seats) {
  for (const seat of seats) {
    const element = $(`seat-${seat.piece_color}`);
    const mine = page.seat && page.seat.colour === seat.piece_color;
    element.querySelector(".seat-user").textContent = seat.username ? `${seat.username}${mine ? " (you)" : ""}` : "free";
    element.querySelector(".seat-take").hidden = Boolean(seat.username) || Boolean(page.seat);
  }
  $("computer-form").hidden = seats.every((seat) => seat.username) || false;
}

function showStatus() {
  const status = page.status;
  const mine = page.seat && page.seat.colour;
  let text;
  switch (status.status) {
    case "not active":
      text = "Nobody sits at this table yet: take a seat.";
      break;
    case "initialized":
      text = "Waiting for a second player (send them the table's link, or let the computer play).";
      break;
    case "started":
      text = status.p_turn === mine ? `Your turn: play ${status.dice_left.join(", ")}.` : `${name(status.p_turn)} to play ${status.dice_left.join(", ")}.`;
      break;
    case "ended":
      text = status.result === "D" ? "The game is drawn." : `${name(status.result)} won${status.score === 2 ? " double" : ""}.`;
      break;
    default:
      text = `${name(status.result)} won: ${name(status.result === "W" ? "B" : "W")} took too long.`;
  }
  $("state").textContent = text;
  $("passes").textContent = status.passes
    .map((pass) => `${name(pass.color)} rolled ${pass.dice.join("-")} and could not move: the turn passed.`)
    .join(" ");
  $("history").hidden = !["ended", "aborded"].includes(status.status);
}

// --- The board ----------------------------------------------------------------------------------------------------

const board = new PlakotoBoard($("board"));

function draw() {
  if (!page.state) return;
  const status = page.status;
  board.show({
    state: page.state,
    dice: status && status.dice,
    diceLeft: status && status.dice_left,
    selected: page.selected,
    targets: targetsOf(page.selected),
  });
}

/** Return the destinations the board's `moves` offer from point `x` (the server's own list). */
function targetsOf(x) {
  if (x === null || !page.board) return [];
  const cell = page.board.find((each) => each.x === x && each.moves);
  return cell ? cell.moves.map((move) => move.x) : [];
}

/** Return the centre of point `x` (or its tray) on the canvas, for people and for the browser tests. */
page.pointCentre = (x) => board.centre(x);

async function click(event) {
  const rect = $("board").getBoundingClientRect();
  const x = board.pointAt(event.clientX - rect.left, event.clientY - rect.top);
  if (x === null || !page.seat) return;
  if (page.selected !== null && targetsOf(page.selected).includes(x)) {
    const from = page.selected;
    // The top piece of the point, as the board the moves came with shows it.
    const height = page.board.filter((cell) => cell.x === from && cell.piece).length;
    page.selected = null;
    try {
      await api(`board/piece/${from}/${height}/`, { method: "PUT", body: { x }, token: page.seat.token });
      say("");
    } catch (error) {
      say(error.message, "error");
    }
    await refresh(true);
    return;
  }
  page.selected = targetsOf(x).length ? x : null;
  draw();
}

// --- Tables and seats ----------------------------------------------------------------------------------------------

function open(table) {
  page.table = table;
  page.status = null;
  const stored = localStorage.getItem(STORED + table);
  page.seat = stored ? JSON.parse(stored) : null;
  const url = new URL(location.href);
  url.searchParams.set("table", table);
  history.replaceState(null, "", url);
  $("table-link").href = url.href;
  $("table-link").textContent = url.href;
  $("table").hidden = false;
  $("table-name").value = table;
  follow(table);
  refresh(true);
}

/** Follow the table's stream: each message is its status after a change. */
function follow(table) {
  if (page.stream) page.stream.close();
  page.stream = new EventSource(`/tables/plakoto/${table}/stream`);
  page.stream.addEventListener("message", (event) => {
    const [status] = JSON.parse(event.data);
    page.streamed = status;
    if (page.table === table && JSON.stringify(status) !== JSON.stringify(page.status)) refresh(true);
  });
}

async function sit(colour) {
  const username = $(`seat-${colour}`).querySelector(".seat-name").value.trim() || document.body.dataset.nick || "";
  try {
    // The page's own seat call: the same as `PUT players/<p>`, with the signed-in player's account recorded.
    const response = await fetch(`/tables/plakoto/${page.table}/seat/${colour}`, {
      method: "PUT",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ username, color: colour }),
    });
    const data = await response.json();
    if (!response.ok) throw new Error(data.errormesg);
    const [seat] = data;
    page.seat = { colour, token: seat.token };
    localStorage.setItem(STORED + page.table, JSON.stringify(page.seat));
    say(`You sit as ${name(colour)}.`);
  } catch (error) {
    say(error.message, "error");
  }
  refresh(true);
}

$("open-form").addEventListener("submit", (event) => {
  event.preventDefault();
  open($("table-name").value.trim());
});
$("new-table").addEventListener("click", () => {
  open(`table-${Math.random().toString(36).slice(2, 8)}`);
});
for (const colour of ["W", "B"]) {
  const seat = $(`seat-${colour}`);
  seat.querySelector(".seat-name").value = document.body.dataset.nick || "";
  seat.querySelector(".seat-button").addEventListener("click", () => sit(colour));
}
$("computer-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const response = await fetch(`/tables/plakoto/${page.table}/computer`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ level: Number($("computer-level").value) }),
  });
  const data = await response.json();
  if (!response.ok) say(data.errormesg, "error");
  refresh(true);
});
$("reset").addEventListener("click", async () => {
  if (!confirm("Reset the table? Both seats are freed; a game in play ends with no result.")) return;
  try {
    await api("board/", { method: "POST", body: {}, token: page.seat && page.seat.token });
    localStorage.removeItem(STORED + page.table);
    page.seat = null;
    say("The table is reset.");
  } catch (error) {
    say(error.message, "error");
  }
  refresh(true);
});
$("board").addEventListener("click", click);
setInterval(() => refresh(), POLL_MS);

const named = new URLSearchParams(location.search).get("table");
if (named) open(named);
