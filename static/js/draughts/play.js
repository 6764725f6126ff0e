// The draughts page: make a room (against a friend, who gets a link, or against the computer), join one, and play it
// on the canvas board with both clocks ticking and draw offers, through the rooms' web API (protocols/draughts/views.py)
// — the same rooms as the TLS line server's, so a friend may play from a line client with the room's UUIDs.

import { DraughtsBoard } from "./board.js";

const root = document.body.dataset.draughtsRoot; // "/draughts/rooms/"
const $ = (id) => document.getElementById(id);
const RENEW_MS = 5000;
const STORED = "draughts-room:";

const page = {
  room: null, // {room, key, holder, colour, enemy_key?}
  view: null, // the room's last view, and when it came (for the clocks)
  receivedAt: 0,
  stream: null,
  renewTimer: null,
};
window.draughtsPage = page; // for people curious in the console, and the browser tests

const board = new DraughtsBoard($("board"), { onMove: (path) => act("move", { path }) });
page.board = board;

async function call(path, body = null) {
  const response = await fetch(root + path, {
    method: body === null ? "GET" : "POST",
    headers: body === null ? {} : { "Content-Type": "application/json" },
    body: body === null ? undefined : JSON.stringify(body),
  });
  const data = await response.json().catch(() => ({ error: `The server answered ${response.status}` }));
  if (!response.ok) throw new Error(data.error || `The server answered ${response.status}`);
  return data;
}

function say(text, kind = "info") {
  const message = $("message");
  message.textContent = text;
  message.dataset.kind = kind;
}

function sideName(side) {
  return side === "w" ? "White" : "Black";
}

function clockText(ms) {
  const seconds = Math.max(0, ms) / 1000;
  const minutes = Math.floor(seconds / 60);
  const rest = seconds - minutes * 60;
  if (seconds < 10) return `0:0${rest.toFixed(1)}`;
  return `${minutes}:${String(Math.floor(rest)).padStart(2, "0")}`;
}

function tick() {
  const view = page.view;
  if (!view) return;
  const elapsed = performance.now() - page.receivedAt;
  ["w", "b"].forEach((side, index) => {
    const running = view.state === "PLAYING" && view.turn === side;
    const left = view.times[index] - (running ? elapsed : 0);
    const clock = $(side === "w" ? "clock-white" : "clock-black");
    clock.querySelector(".clock-time").textContent = clockText(left);
    clock.classList.toggle("clock-running", running);
    clock.classList.toggle("clock-low", running && left < 30000);
  });
}

function showView(view) {
  if (page.view && view.version < page.view.version) return; // an older view overtaken on its way
  page.view = view;
  page.receivedAt = performance.now();
  const mine = page.room ? page.room.colour : null;
  const over = !["WAITING", "PLAYING"].includes(view.state);
  board.show(view.board, view.turn, { player: view.state === "PLAYING" ? mine : null });
  $("game").hidden = false;
  $("state").dataset.state = view.state;
  ["w", "b"].forEach((side, index) => {
    const clock = $(side === "w" ? "clock-white" : "clock-black");
    clock.querySelector(".clock-online").textContent = view.online[index] ? "online" : "away";
    clock.querySelector(".clock-draw").hidden = !view.wants_draw[index];
  });
  const opponent = mine === "w" ? 1 : 0;
  const me = mine === "w" ? 0 : 1;
  let text;
  if (view.state === "WAITING") text = "Waiting for your opponent: give them the link below.";
  else if (view.state === "PLAYING") text = mine === view.turn ? "Your move." : `${sideName(view.turn)} to move.`;
  else if (view.state === "DRAW") text = "The game is drawn.";
  else {
    const winner = view.state === "WHITE_WON" ? "w" : "b";
    text = winner === mine ? "You won: well played!" : `${sideName(winner)} won.`;
  }
  $("state").textContent = text;
  const playing = view.state === "PLAYING" && mine !== null;
  $("draw").hidden = !playing || view.wants_draw[me];
  $("draw").textContent = view.wants_draw[opponent] ? "Accept the draw" : "Offer a draw";
  $("cancel-draw").hidden = !playing || !view.wants_draw[me];
  $("draw-offered").hidden = !playing || !view.wants_draw[opponent] || view.wants_draw[me];
  $("invite").hidden = view.state !== "WAITING" || !page.room || !page.room.enemy_key;
  $("history").hidden = !over;
  $("history").href = `/games/${view.game}/`;
  tick();
}

async function act(action, extra = {}) {
  const room = page.room;
  try {
    const view = await call(`${room.room}/${action}`, { key: room.key, holder: room.holder, ...extra });
    if (view.board) showView(view);
  } catch (error) {
    say(error.message, "error");
    // The board goes back to the server's position.
    if (page.view) board.show(page.view.board, page.view.turn, { player: room.colour });
    refresh();
  }
}

async function refresh() {
  if (!page.room) return;
  try {
    showView(await call(`${page.room.room}/`));
  } catch (error) {
    say(error.message, "error");
  }
}

function follow(room) {
  if (page.stream) page.stream.close();
  page.stream = new EventSource(`${root}${room}/stream`);
  page.stream.onmessage = (event) => showView(JSON.parse(event.data));
}

function enter(room) {
  page.room = room;
  localStorage.setItem(STORED + room.room, JSON.stringify({ key: room.key, enemy_key: room.enemy_key || null }));
  const url = new URL(location.href);
  url.searchParams.set("room", room.room);
  url.hash = "";
  history.replaceState(null, "", url);
  board.setBottom(room.colour);
  $("start").hidden = true;
  $("you").textContent = `You play ${sideName(room.colour).toLowerCase()}.`;
  $("your-key").textContent = room.key;
  $("room-id").textContent = room.room;
  if (room.enemy_key) {
    const link = new URL(location.href);
    link.hash = `key=${room.enemy_key}`;
    $("invite-link").value = link.href;
    $("enemy-key").textContent = room.enemy_key;
  }
  say("");
  showView(room);
  follow(room.room);
  clearInterval(page.renewTimer);
  page.renewTimer = setInterval(renew, RENEW_MS);
}

async function renew() {
  try {
    showView(await call(`${page.room.room}/renew`, { key: page.room.key, holder: page.room.holder }));
  } catch (error) {
    clearInterval(page.renewTimer);
    say(`${error.message}: this room is open in another window, or no longer exists.`, "error");
    board.show(page.view.board, page.view.turn, { player: null });
  }
}

async function create(body) {
  try {
    enter(await call("", body));
  } catch (error) {
    say(error.message, "error");
  }
}

async function join(roomId, key) {
  try {
    const room = await call(`${roomId}/join`, { key });
    const stored = JSON.parse(localStorage.getItem(STORED + roomId) || "{}");
    enter({ ...room, enemy_key: stored.key === key ? stored.enemy_key : null });
  } catch (error) {
    say(`${error.message}.`, "error");
    $("start").hidden = false;
  }
}

$("create").addEventListener("click", () => create({}));
$("computer-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const colour = $("computer-colour").value;
  create({ computer: Number($("computer-level").value), colour: colour || null });
});
$("join-form").addEventListener("submit", (event) => {
  event.preventDefault();
  join($("join-room").value.trim(), $("join-key").value.trim());
});
$("draw").addEventListener("click", () => act("draw"));
$("cancel-draw").addEventListener("click", () => act("cancel-draw"));
$("leave").addEventListener("click", async () => {
  if (!confirm("Leave the room? Your clock keeps running while you are away; come back with your colour's UUID.")) {
    return;
  }
  await act("leave");
  localStorage.removeItem(STORED + page.room.room);
  location.href = location.pathname;
});
$("copy-link").addEventListener("click", async () => {
  await navigator.clipboard.writeText($("invite-link").value).catch(() => $("invite-link").select());
  say("The link is copied: send it to your opponent.");
});
window.addEventListener("pagehide", () => {
  if (!page.room) return;
  // The page closes: its colour is no longer held (its player has not left the room).
  const body = JSON.stringify({ key: page.room.key, holder: page.room.holder });
  navigator.sendBeacon(`${root}${page.room.room}/release`, new Blob([body], { type: "application/json" }));
});
setInterval(tick, 100);

// Where the page was opened: a room's link (with a colour's UUID after #key=), a room this browser plays, or none.
const params = new URLSearchParams(location.search);
const hashKey = new URLSearchParams(location.hash.slice(1)).get("key");
const roomId = params.get("room");
if (roomId && (hashKey || localStorage.getItem(STORED + roomId))) {
  join(roomId, hashKey || JSON.parse(localStorage.getItem(STORED + roomId)).key);
} else if (roomId) {
  $("join-room").value = roomId;
}
