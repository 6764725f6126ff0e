// The Plakoto page: open a table, take a seat (or give the free one to the computer), and play on a canvas
// backgammon board through the table's REST API (/plakoto/<table>/, the same services as every client of it).
// The page polls the table's status, as the API's clients do, and reads the board when it changed.

import { OFF, State, WHITE } from "../rules/plakoto.js";

const $ = (id) => document.getElementById(id);
const POLL_MS = 1000;
const STORED = "plakoto-seat:";
const COLOURS = {
  felt: "#2f5d46",
  frame: "#5c3a1f",
  pointA: "#e8d3a8",
  pointB: "#9c4a1f",
  white: "#fbf4e2",
  whiteEdge: "#a8906a",
  black: "#2b1d14",
  blackEdge: "#0d0805",
  target: "rgba(217, 162, 58, 0.85)",
  selected: "rgba(29, 78, 216, 0.9)",
  die: "#fffaf1",
};

const page = {
  table: null, // the table's name
  seat: null, // {colour, token} of this browser's seat, if any
  status: null,
  state: null, // a rules State rebuilt from the board and the status
  board: null, // the board's cells as the API sent them
  selected: null, // the point chosen to move from
  geometry: null,
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

// --- The board -----------------------------------------------------------------------------------------------------

/** Return where point `x` is drawn: its column's left edge, width, and whether it hangs from the top. */
function pointPlace(x, geometry) {
  const { left, width, bar } = geometry;
  // Top row, left to right: 13 … 24; bottom row, left to right: 12 … 1. A bar between the two halves.
  const top = x >= 13;
  const index = top ? x - 13 : 12 - x;
  const column = left + index * width + (index >= 6 ? bar : 0);
  return { column, top };
}

function draw() {
  const canvas = $("board");
  const ratio = window.devicePixelRatio || 1;
  const widthCss = canvas.clientWidth;
  if (!widthCss || !page.state) return;
  const heightCss = Math.round(widthCss * 0.78);
  canvas.style.height = `${heightCss}px`;
  canvas.width = Math.round(widthCss * ratio);
  canvas.height = Math.round(heightCss * ratio);
  const context = canvas.getContext("2d");
  context.setTransform(ratio, 0, 0, ratio, 0, 0);
  const tray = widthCss * 0.08;
  const bar = widthCss * 0.04;
  const width = (widthCss - tray - bar - 16) / 12;
  const geometry = { left: 8, width, bar, tray, height: heightCss, radius: Math.min(width * 0.45, heightCss / 24) };
  page.geometry = geometry;
  context.fillStyle = COLOURS.frame;
  context.fillRect(0, 0, widthCss, heightCss);
  context.fillStyle = COLOURS.felt;
  context.fillRect(8, 8, widthCss - tray - 16, heightCss - 16);
  const state = page.state;
  const targets = targetsOf(page.selected);
  for (let x = 1; x <= 24; x++) {
    const { column, top } = pointPlace(x, geometry);
    const base = top ? 8 : heightCss - 8;
    const tip = top ? heightCss * 0.42 : heightCss * 0.58;
    context.fillStyle = x % 2 ? COLOURS.pointA : COLOURS.pointB;
    context.beginPath();
    context.moveTo(column, base);
    context.lineTo(column + width, base);
    context.lineTo(column + width / 2, tip);
    context.closePath();
    context.fill();
    context.fillStyle = "rgba(255, 244, 220, 0.8)";
    context.font = `${Math.max(9, width * 0.28)}px system-ui, sans-serif`;
    context.textAlign = "center";
    context.fillText(String(x), column + width / 2, top ? heightCss * 0.46 : heightCss * 0.56);
    if (targets.includes(x)) {
      context.strokeStyle = COLOURS.target;
      context.lineWidth = 4;
      context.stroke();
    }
    drawStack(context, state.points[x], column + width / 2, top, geometry, x === page.selected);
  }
  drawTray(context, geometry, targets);
  drawDice(context, geometry);
}

function drawStack(context, stack, centre, top, geometry, selected) {
  const { radius, height } = geometry;
  const step = Math.min(radius * 2, (height * 0.4 - radius) / Math.max(1, stack.length - 1));
  stack.forEach(([colour], index) => {
    const y = top ? 8 + radius + index * step : height - 8 - radius - index * step;
    const pinned = index === 0 && stack.length > 1 && stack[stack.length - 1][0] !== colour;
    context.beginPath();
    context.arc(centre, y, radius, 0, 2 * Math.PI);
    context.fillStyle = colour === WHITE ? COLOURS.white : COLOURS.black;
    context.fill();
    context.lineWidth = 2;
    context.strokeStyle = colour === WHITE ? COLOURS.whiteEdge : COLOURS.blackEdge;
    context.stroke();
    if (pinned) {
      // A pinned piece: crossed, held under its pinner.
      context.strokeStyle = "#c23a27";
      context.lineWidth = 3;
      context.beginPath();
      context.moveTo(centre - radius * 0.6, y - radius * 0.6);
      context.lineTo(centre + radius * 0.6, y + radius * 0.6);
      context.moveTo(centre + radius * 0.6, y - radius * 0.6);
      context.lineTo(centre - radius * 0.6, y + radius * 0.6);
      context.stroke();
    }
    if (selected && index === stack.length - 1) {
      context.strokeStyle = COLOURS.selected;
      context.lineWidth = 4;
      context.beginPath();
      context.arc(centre, y, radius + 2, 0, 2 * Math.PI);
      context.stroke();
    }
  });
}

function trayPlace(geometry, colour) {
  const x = geometry.left + 12 * geometry.width + geometry.bar + 8;
  // White bears off at the bottom right (its home is 1 … 6), black at the top right.
  return colour === WHITE ? { x, y: geometry.height / 2, h: geometry.height / 2 - 8 } : { x, y: 8, h: geometry.height / 2 - 8 };
}

function drawTray(context, geometry, targets) {
  for (const colour of ["W", "B"]) {
    const { x, y, h } = trayPlace(geometry, colour);
    context.fillStyle = "#3b2413";
    context.fillRect(x, y, geometry.tray - 8, h);
    if (targets.includes(OFF[colour])) {
      context.strokeStyle = COLOURS.target;
      context.lineWidth = 4;
      context.strokeRect(x, y, geometry.tray - 8, h);
    }
    const count = page.state.off[colour].length;
    for (let index = 0; index < count; index++) {
      context.fillStyle = colour === WHITE ? COLOURS.white : COLOURS.black;
      context.fillRect(x + 4, y + 4 + index * ((h - 8) / 15), geometry.tray - 16, (h - 8) / 15 - 2);
    }
  }
}

function drawDice(context, geometry) {
  const status = page.status;
  if (!status || !status.dice) return;
  const size = geometry.width * 0.7;
  const left = [...status.dice_left];
  const shown = status.dice[0] === status.dice[1] ? [status.dice[0], status.dice[0], status.dice[0], status.dice[0]] : status.dice;
  const startX = geometry.left + 6 * geometry.width + geometry.bar + geometry.width * 1.5;
  shown.forEach((value, index) => {
    const used = !left.includes(value);
    if (!used) left.splice(left.indexOf(value), 1);
    const x = startX + index * (size + 8);
    const y = geometry.height / 2 - size / 2;
    context.globalAlpha = used ? 0.35 : 1;
    context.fillStyle = COLOURS.die;
    context.fillRect(x, y, size, size);
    context.fillStyle = "#2b1d12";
    const pips = { 1: [[1, 1]], 2: [[0, 0], [2, 2]], 3: [[0, 0], [1, 1], [2, 2]], 4: [[0, 0], [0, 2], [2, 0], [2, 2]], 5: [[0, 0], [0, 2], [1, 1], [2, 0], [2, 2]], 6: [[0, 0], [0, 1], [0, 2], [2, 0], [2, 1], [2, 2]] }[value];
    for (const [row, column] of pips) {
      context.beginPath();
      context.arc(x + size * (0.2 + 0.3 * column), y + size * (0.2 + 0.3 * row), size * 0.08, 0, 2 * Math.PI);
      context.fill();
    }
    context.globalAlpha = 1;
  });
  page.dice = shown;
}

/** Return the destinations the board's `moves` offer from point `x` (the server's own list). */
function targetsOf(x) {
  if (x === null || !page.board) return [];
  const cell = page.board.find((each) => each.x === x && each.moves);
  return cell ? cell.moves.map((move) => move.x) : [];
}

/** Return the point (or off tray: 0/25) at a place on the canvas, or null. */
function pointAt(px, py) {
  const geometry = page.geometry;
  if (!geometry) return null;
  for (const colour of ["W", "B"]) {
    const { x, y, h } = trayPlace(geometry, colour);
    if (px >= x && px <= x + geometry.tray && py >= y && py <= y + h) return OFF[colour];
  }
  for (let x = 1; x <= 24; x++) {
    const { column, top } = pointPlace(x, geometry);
    const inRow = top ? py < geometry.height / 2 : py >= geometry.height / 2;
    if (inRow && px >= column && px < column + geometry.width) return x;
  }
  return null;
}

/** Return the centre of point `x` (or its tray) on the canvas, for people and for the browser tests. */
page.pointCentre = (x) => {
  const geometry = page.geometry;
  if (x === 0 || x === 25) {
    const { x: left, y, h } = trayPlace(geometry, x === 0 ? "W" : "B");
    return [left + geometry.tray / 2, y + h / 2];
  }
  const { column, top } = pointPlace(x, geometry);
  return [column + geometry.width / 2, top ? geometry.height * 0.2 : geometry.height * 0.8];
};

async function click(event) {
  const rect = $("board").getBoundingClientRect();
  const x = pointAt(event.clientX - rect.left, event.clientY - rect.top);
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
  refresh(true);
}

async function sit(colour) {
  const username = $(`seat-${colour}`).querySelector(".seat-name").value.trim() || document.body.dataset.nick || "";
  try {
    const [seat] = await api(`players/${colour}`, { method: "PUT", body: { username, color: colour } });
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
new ResizeObserver(() => draw()).observe($("board"));
setInterval(() => refresh(), POLL_MS);

const named = new URLSearchParams(location.search).get("table");
if (named) open(named);
