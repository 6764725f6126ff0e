// What the replay and the live view share: a read-only board, seen from Blue's side (the initial player at the
// bottom), and the players' piece counts beside it.

import { Board } from "./board.js";
import { BLUE, RED } from "./rules/tab.js";

const reducedMotion = window.matchMedia("(prefers-reduced-motion: reduce)");

/** Return a board that shows positions and takes no clicks. */
export function spectatorBoard(canvas) {
  return new Board(canvas, { onActivate: () => {}, speed: () => (reducedMotion.matches ? 0 : 1) });
}

/**
 * Show a position on `board`: `position` has the API's fields (pieces, step, cell, selected); `lastMove` is
 * {from, to} or null.
 */
export function showPosition(board, position, lastMove = null) {
  const choosing = position.step === "to" && position.selected;
  board.setView({
    size: position.pieces.length / 4,
    pieces: position.pieces,
    bottom: BLUE,
    movable: new Set(),
    destinations: new Set(choosing ? position.selected : []),
    selected: choosing ? position.cell : null,
    lastMove: choosing ? null : lastMove,
    interactive: false,
  });
}

/** Show how many pieces each player has left, and whose turn it is (`turn`: a colour, or null). */
export function showPlayers(pieces, turn) {
  for (const color of [BLUE, RED]) {
    const line = document.querySelector(`.viewer-player[data-color="${color}"]`);
    const left = pieces.filter((piece) => piece && piece.color === color).length;
    line.querySelector(".viewer-pieces").textContent = `${left} piece${left === 1 ? "" : "s"}`;
    line.classList.toggle("is-turn", turn === color);
  }
}
