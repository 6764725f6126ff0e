// The Fish page: open or make a tournament, take seats (yours, or the computer's), and play on the hex board. The
// page speaks the player protocol through the web transport (POST /tables/fish/request, the very requests a TCP
// client sends), keeps the tokens of its seats in this browser, and follows the tournament's stream, as spectators do.

import { COLOURS, MOVEMENT, PLACEMENT, State } from "../rules/fish.js";
import { FishBoard } from "./board.js";

const $ = (id) => document.getElementById(id);
const NAME = /^.{1,64}$/u;
const LABEL = { red: "Red", white: "White", brown: "Brown", black: "Black" };

let name = null;
let view = null;
let state = null; // the rules' state of the game in play, from the view
let chosen = null; // the penguin picked to move: [row, col]
let sunk = null; // the tile the last move left
let source = null;
let busy = false;
const board = new FishBoard($("board"));

function say(text, error = false) {
  const message = $("message");
  message.textContent = text;
  message.classList.toggle("draughts-error", error);
}

// --- Seats held in this browser ----------------------------------------------------------------------------------

function held() {
  try {
    return JSON.parse(localStorage.getItem(`fish:${name}`) || "[]");
  } catch {
    return [];
  }
}

function hold(seat) {
  localStorage.setItem(`fish:${name}`, JSON.stringify([...held().filter((s) => s.color !== seat.color), seat]));
}

function tokenOf(colour) {
  const seat = held().find((s) => s.color === colour);
  return seat ? seat.token : null;
}

// --- The protocol, over the web -----------------------------------------------------------------------------------

async function ask(request) {
  const response = await fetch("/tables/fish/request", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(request),
  });
  const body = await response.json();
  if (body.error_type) throw new Error(body.error_message);
  return body;
}

async function join() {
  const players = Number($("players").value);
  try {
    const joined = await ask({ action: "join_tournament", tournament_id: name, players });
    hold({ token: joined.user_token, color: joined.color });
    say(`You play ${LABEL[joined.color]}.`);
    // The stream may have shown the game already, before this seat's token came: show it again, as this seat's.
    if (view) render(view);
    if (!source) follow();
  } catch (error) {
    say(error.message, true);
  }
}

async function computer() {
  try {
    const response = await fetch(`/tables/fish/${encodeURIComponent(name)}/computer`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ level: Number($("computer-level").value) }),
    });
    const body = await response.json();
    if (body.error_type) throw new Error(body.error_message);
    say(`The computer plays ${LABEL[body.color]}.`);
  } catch (error) {
    say(error.message, true);
  }
}

async function act(request) {
  if (busy) return;
  busy = true;
  // One action at a time: the next waits for this one's answer (the board may show it before the answer comes).
  $("play-choice").disabled = true;
  try {
    await ask(request);
    chosen = null;
  } catch (error) {
    say(error.message, true);
  } finally {
    busy = false;
    $("play-choice").disabled = false;
  }
}

// --- What the page shows -------------------------------------------------------------------------------------------

function mine() {
  if (!view || !view.turn || !state) return null;
  const token = tokenOf(view.turn);
  return token ? { token, seat: COLOURS.indexOf(view.turn) } : null;
}

function targets() {
  const me = mine();
  if (!me) return [];
  if (state.phase === PLACEMENT) return state.legalPlacements(me.seat);
  if (chosen) return state.movesFrom(...chosen).filter((m) => state.isLegalMove(me.seat, m.start, m.end)).map((m) => m.end);
  return state.penguins[me.seat].filter(([row, col]) => state.movesFrom(row, col).length > 0);
}

function draw() {
  if (!view) return;
  board.show({ board: view.board, players: view.players, targets: targets(), chosen, sunk });
  choices();
}

function secondsLeft() {
  if (!view || !view.deadline) return null;
  return Math.max(0, Math.ceil((Date.parse(view.deadline) - Date.now()) / 1000));
}

function describe() {
  const joined = view.players.filter((p) => p.joined).length;
  const me = mine();
  const left = secondsLeft();
  const clock = left === null ? "" : ` · ${left} s left`;
  if (view.status === "waiting") return `Waiting for players: ${joined} of ${view.players.length} have joined.`;
  if (view.status === "finished") {
    const winners = view.winners.map((c) => LABEL[c]).join(" and ");
    return winners ? `The game is over: ${winners} ${view.winners.length > 1 ? "win" : "wins"}.` : "The game is over, with no winner.";
  }
  const doing = view.phase === PLACEMENT ? "place a penguin" : "move a penguin";
  if (me) return `Your turn (${LABEL[view.turn]}): ${doing}${clock}.`;
  return `${LABEL[view.turn]} to ${doing}${clock}.`;
}

function seats() {
  const list = $("seats");
  list.replaceChildren();
  const mineHere = new Set(held().map((s) => s.color));
  for (const player of view.players) {
    const item = document.createElement("li");
    item.className = `fish-seat fish-${player.color}`;
    item.classList.toggle("fish-on-turn", view.turn === player.color);
    item.classList.toggle("fish-removed", player.removed);
    const swatch = document.createElement("span");
    swatch.className = "fish-swatch";
    const who = document.createElement("span");
    who.className = "fish-who";
    const named = player.joined ? player.name : "free seat";
    who.textContent = `${LABEL[player.color]}: ${named}${mineHere.has(player.color) ? " (you)" : ""}`;
    const score = document.createElement("span");
    score.className = "fish-score";
    score.textContent = `${player.score} fish`;
    item.append(swatch, who, score);
    if (player.removed) {
      const why = document.createElement("span");
      why.className = "fish-why";
      why.textContent = `removed ${player.why}`.trim();
      item.append(why);
    }
    list.append(item);
  }
  const free = view.players.some((p) => !p.joined);
  $("join-form").hidden = !free;
  $("players-label").hidden = true;
  $("computer-form").hidden = !free;
  $("history").hidden = view.status !== "finished";
  $("history").href = `/games/${view.game}/`;
}

function choices() {
  const select = $("action-choice");
  const me = mine();
  select.replaceChildren();
  $("action-form").hidden = !me;
  if (!me) return;
  const actions =
    state.phase === PLACEMENT
      ? state.legalPlacements(me.seat).map(([row, col]) => ({ label: `Place on row ${row}, column ${col}`, place: [row, col] }))
      : state.legalMoves(me.seat).map((m) => ({
          label: `Move from row ${m.start[0]}, column ${m.start[1]} to row ${m.end[0]}, column ${m.end[1]}`,
          move: m,
        }));
  actions.forEach((action, index) => {
    const option = document.createElement("option");
    option.value = String(index);
    option.textContent = action.label;
    select.append(option);
  });
  select.actions = actions;
}

function render(next) {
  const before = view;
  view = next;
  state = view.status === "playing" ? State.fromJSON({ ...view, removed: view.players.filter((p) => p.removed).map((p) => p.color) }) : null;
  sunk = null;
  if (before && before.board) {
    for (let row = 0; row < view.board.length; row += 1) {
      for (let col = 0; col < view.board[row].length; col += 1) {
        if (before.board[row][col] > 0 && view.board[row][col] === 0) sunk = [row, col];
      }
    }
  }
  if (chosen && (!mine() || !state.penguins[COLOURS.indexOf(view.turn)].some(([r, c]) => r === chosen[0] && c === chosen[1]))) {
    chosen = null;
  }
  $("state").textContent = describe();
  seats();
  draw();
  if (mine() && document.hidden) document.title = `Your turn · Fish`;
  else document.title = `Fish: ${name}`;
}

function follow() {
  if (source) source.close();
  source = new EventSource(`/tables/fish/${encodeURIComponent(name)}/stream`);
  source.onmessage = (event) => render(JSON.parse(event.data));
}

async function open(tournament) {
  name = tournament;
  const url = new URL(location.href);
  url.searchParams.set("tournament", name);
  history.replaceState(null, "", url);
  $("open-form").hidden = true;
  $("waiting").hidden = true;
  $("tournament").hidden = false;
  $("tournament-name").textContent = name;
  $("tournament-link").textContent = url.href;
  $("tournament-link").href = url.href;
  $("protocol-id").textContent = JSON.stringify(name);
  const response = await fetch(`/tables/fish/${encodeURIComponent(name)}/view`);
  if (response.status === 404) {
    say("Nobody has joined this tournament yet: choose how many play, and join to make it.");
    $("players-label").hidden = false;
    $("join-form").hidden = false;
    $("computer-form").hidden = true;
    board.show({ board: Array.from({ length: 10 }, () => [0, 0, 0, 0]), players: [] });
    return;
  }
  render(await response.json());
  follow();
}

// --- Input ---------------------------------------------------------------------------------------------------------

$("board").addEventListener("click", (event) => {
  const me = mine();
  if (!me || busy) return;
  const bounds = $("board").getBoundingClientRect();
  const tile = board.tileAt(event.clientX - bounds.left, event.clientY - bounds.top);
  if (!tile) return;
  const [row, col] = tile;
  if (state.phase === PLACEMENT) {
    if (state.isLegalPlacement(me.seat, row, col)) act({ action: "place_penguin", user_token: me.token, row, col });
    return;
  }
  if (state.phase !== MOVEMENT) return;
  if (state.penguins[me.seat].some(([r, c]) => r === row && c === col)) {
    chosen = [row, col];
  } else if (chosen && state.isLegalMove(me.seat, chosen, [row, col])) {
    const [startRow, startCol] = chosen;
    act({ action: "move_penguin", user_token: me.token, start_row: startRow, start_col: startCol, end_row: row, end_col: col });
  } else {
    chosen = null;
  }
  draw();
});

$("action-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const me = mine();
  const action = $("action-choice").actions?.[Number($("action-choice").value)];
  if (!me || !action) return;
  if (action.place) act({ action: "place_penguin", user_token: me.token, row: action.place[0], col: action.place[1] });
  else {
    const { start, end } = action.move;
    act({ action: "move_penguin", user_token: me.token, start_row: start[0], start_col: start[1], end_row: end[0], end_col: end[1] });
  }
});

$("join-form").addEventListener("submit", (event) => {
  event.preventDefault();
  join();
});

$("computer-form").addEventListener("submit", (event) => {
  event.preventDefault();
  computer();
});

$("open-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const wanted = $("tournament-input").value.trim();
  if (NAME.test(wanted)) open(wanted);
});

$("new-tournament").addEventListener("click", () => {
  const letters = crypto.getRandomValues(new Uint32Array(2));
  open(`fish-${letters[0].toString(36)}${letters[1].toString(36)}`.slice(0, 20));
});

document.addEventListener("visibilitychange", () => {
  if (!document.hidden && name) document.title = `Fish: ${name}`;
});

setInterval(() => {
  if (view && view.deadline) $("state").textContent = describe();
}, 1000);

// The tournaments that wait for players, to join with a click (only while no tournament is open here).
async function listWaiting() {
  const response = await fetch("/tables/fish/waiting");
  const { tournaments } = await response.json();
  const list = $("waiting-list");
  list.replaceChildren();
  for (const entry of tournaments) {
    const item = document.createElement("li");
    const link = document.createElement("a");
    link.href = `?tournament=${encodeURIComponent(entry.tournament)}`;
    link.textContent = entry.tournament;
    item.append(link, ` · ${entry.joined} of ${entry.players} players`);
    list.append(item);
  }
  $("waiting").hidden = tournaments.length === 0;
}

const asked = new URLSearchParams(location.search).get("tournament");
if (asked && NAME.test(asked)) open(asked);
else listWaiting();

// What tests (and curious players) may read of the page: the tournament as shown, and where a tile is drawn.
window.fishPage = {
  view: () => view,
  busy: () => busy,
  held: () => held(),
  targets: () => targets(),
  tileCentre: (row, col) => board.centre(row, col),
};
