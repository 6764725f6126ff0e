// Watching a game live: a read-only stream of the game's snapshots (not the players' `update`), shown on the same
// canvas board as the game page. `window.watch` lets tests see what is shown.

import { State, cellName } from "./rules/tab.js";
import { showPlayers, showPosition, spectatorBoard } from "./spectate.js";

const canvas = document.getElementById("board");
const status = document.getElementById("watch-status");
const diceLine = document.getElementById("watch-dice");
const board = spectatorBoard(canvas);
const names = new Map();
const log = document.getElementById("watch-log");
const LOG_KEPT = 30;
let version = null;
let last = null;

// The turn's clock: the time left as the page was made, then the whole turn again after every change (each action
// gives the player on turn their full time).
const clock = document.getElementById("watch-clock");
let seenVersion = Number(canvas.dataset.version ?? -1); // the newest version the clock was set for
const turnMs = Number(canvas.dataset.turnSeconds ?? 0) * 1000;
let turnEndsAt = canvas.dataset.turnLeftMs ? performance.now() + Number(canvas.dataset.turnLeftMs) : null;

function renderClock() {
  if (!clock) return;
  if (turnEndsAt === null || !last?.pieces || "winner" in last) {
    clock.textContent = "";
    return;
  }
  const left = Math.max(0, Math.ceil((turnEndsAt - performance.now()) / 1000));
  clock.textContent = `${last.turn} has ${Math.floor(left / 60)}:${String(left % 60).padStart(2, "0")} left to play.`;
  clock.classList.toggle("is-urgent", left <= 20);
}
setInterval(renderClock, 1000);

/** The four sticks of a throw, drawn as the replay's log draws them (light or dark). */
function sticksOf(dice) {
  const sticks = document.createElement("span");
  sticks.className = "sticks";
  sticks.setAttribute("aria-label", String(dice.value));
  for (const light of dice.stickValues) {
    const stick = document.createElement("span");
    stick.className = light ? "stick stick-light" : "stick";
    sticks.append(stick);
  }
  return sticks;
}

/** Add to the list what happened between two snapshots: a throw, a move or a pass. */
function logChange(before, after) {
  if (!log || !before?.pieces) return;
  const size = Number(canvas.dataset.size);
  const lines = [];
  if (after.dice && !before.dice) lines.push([`${after.turn} threw ${after.dice.value}`, after.dice]);
  const moved = after.step === "from" && after.selected;
  if (moved && JSON.stringify(after.selected) !== JSON.stringify(before.step === "from" ? before.selected : null)) {
    const [from, to] = after.selected;
    lines.push([`${before.turn} moved from ${cellName(from, size)} to ${cellName(to, size)}`, null]);
  }
  if (!moved && before.dice && !after.dice && after.turn !== before.turn && !lines.length) {
    lines.push([`${before.turn} passed`, null]);
  }
  for (const [text, dice] of lines) {
    const item = document.createElement("li");
    if (dice) item.append(sticksOf(dice), " ");
    item.append(text);
    log.prepend(item);
  }
  while (log.children.length > LOG_KEPT) log.lastElementChild.remove();
}

showPosition(board, State.initial(Number(canvas.dataset.size)).toJSON());

function show(message) {
  const position = { pieces: message.pieces, step: message.step, cell: message.cell, selected: message.selected };
  const moved = message.step === "from" && message.selected ? { from: message.selected[0], to: message.selected[1] } : null;
  showPosition(board, position, moved);
  for (const [nick, color] of Object.entries(message.players)) {
    names.set(nick, color);
    document.querySelector(`.viewer-player[data-color="${color}"] .viewer-nick`).textContent = nick;
  }
  const over = "winner" in message;
  showPlayers(message.pieces, over ? null : names.get(message.turn));
  if (over) {
    showEnd(message.winner);
    diceLine.textContent = "";
    return;
  }
  status.textContent = `${message.turn} to play.`;
  const dice = message.dice;
  diceLine.replaceChildren(
    message.mustPass
      ? `${message.turn} threw ${dice.value} and must pass.`
      : dice
        ? `${message.turn} threw ${dice.value}${dice.keepPlaying ? " (throws again after moving)" : ""}.`
        : `${message.turn} is about to throw.`,
  );
  if (dice) diceLine.prepend(sticksOf(dice), " ");
}

/** The game is over: the badge says so (no longer "Live"), and a link opens the replay of every move. */
function showEnd(winner) {
  const badge = document.querySelector("#result .badge");
  badge.className = `badge ${winner ? "badge-win" : "badge-quit"}`;
  badge.textContent = winner ? `${winner} won` : "No result";
  status.textContent = "The game is over. ";
  const replay = document.createElement("a");
  replay.href = window.location.pathname;
  replay.textContent = "Replay every move";
  status.append(replay);
}

const source = new EventSource(canvas.dataset.stream);
source.onmessage = (event) => {
  const before = last;
  last = JSON.parse(event.data);
  version = Number(event.lastEventId);
  // A change since: a whole turn from now (a snapshot sent again on reconnecting changes nothing).
  if (turnMs && version > seenVersion) turnEndsAt = performance.now() + turnMs;
  seenVersion = Math.max(seenVersion, version);
  if (!last.pieces) {
    status.textContent = "The game ended before it started.";
  } else {
    logChange(before, last);
    show(last);
  }
  if ("winner" in last) source.close();
  renderClock();
};
source.onerror = () => {
  if (source.readyState === EventSource.CLOSED) status.textContent = "The connection was lost: reload the page.";
};

window.watch = Object.freeze({
  version: () => version,
  message: () => last,
  board: () => board.view.pieces,
  clock: () => clock?.textContent ?? "",
});
