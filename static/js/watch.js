// Watching a game live: a read-only stream of the game's snapshots (not the players' `update`), shown on the same
// canvas board as the game page. `window.watch` lets tests see what is shown.

import { State } from "./rules/tab.js";
import { showPlayers, showPosition, spectatorBoard } from "./spectate.js";

const canvas = document.getElementById("board");
const status = document.getElementById("watch-status");
const diceLine = document.getElementById("watch-dice");
const board = spectatorBoard(canvas);
const names = new Map();
let version = null;
let last = null;

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
  diceLine.textContent = message.mustPass
    ? `${message.turn} threw ${dice.value} and must pass.`
    : dice
      ? `${message.turn} threw ${dice.value}${dice.keepPlaying ? " (throws again after moving)" : ""}.`
      : `${message.turn} is about to throw.`;
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
  last = JSON.parse(event.data);
  version = Number(event.lastEventId);
  if (!last.pieces) {
    status.textContent = "The game ended before it started.";
  } else {
    show(last);
  }
  if ("winner" in last) source.close();
};
source.onerror = () => {
  if (source.readyState === EventSource.CLOSED) status.textContent = "The connection was lost: reload the page.";
};

window.watch = Object.freeze({
  version: () => version,
  message: () => last,
  board: () => board.view.pieces,
});
