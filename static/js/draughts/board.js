// The draughts board on a canvas: the position drawn from the side of the player at the bottom, the legal moves shown,
// and moves made by click or drag, a capture square by square. The rules come from static/js/rules/draughts.js; the
// board only asks them which sequences are legal, so what it lets a player send is what the server accepts.

import { State, coordinates, squareName } from "../rules/draughts.js";

const COLOURS = {
  light: "#f3e4c4",
  dark: "#9c6b43",
  edge: "#5c3a1f",
  white: "#fbf4e2",
  whiteEdge: "#a8906a",
  black: "#2b1d14",
  blackEdge: "#0d0805",
  crown: "#d9a23a",
  target: "rgba(47, 125, 74, 0.75)",
  movable: "rgba(217, 162, 58, 0.9)",
  selected: "rgba(29, 78, 216, 0.9)",
  last: "rgba(217, 162, 58, 0.35)",
};

export class DraughtsBoard {
  /**
   * Draw on `canvas`; `onMove(names)` is called with a complete legal move's squares ("c3", "e5", …) when the player
   * makes one. `bottom` is the side drawn at the bottom ("w" or "b").
   */
  constructor(canvas, { onMove = null, bottom = "w" } = {}) {
    this.canvas = canvas;
    this.context = canvas.getContext("2d");
    this.onMove = onMove;
    this.bottom = bottom;
    this.state = new State();
    this.player = null; // the side this board lets move, or null (a spectator, a replay)
    this.path = []; // the squares of the move being made
    this.last = []; // the squares of the last move, highlighted
    this.drag = null;
    canvas.addEventListener("pointerdown", (event) => this._down(event));
    canvas.addEventListener("pointermove", (event) => this._moveDrag(event));
    canvas.addEventListener("pointerup", (event) => this._up(event));
    canvas.addEventListener("pointercancel", () => this._cancelDrag());
    canvas.addEventListener("keydown", (event) => {
      if (event.key === "Escape") this.reset();
    });
    new ResizeObserver(() => this.draw()).observe(canvas);
  }

  /** Show a position; `player` is the side allowed to move now (null: nobody). */
  show(board, turn, { player = null, last = null } = {}) {
    const changed = board !== this.state.text || turn !== this.state.turn;
    this.state = new State(board, turn);
    this.player = player;
    if (changed) this.path = [];
    if (last) this.last = last;
    this.draw();
    this.canvas.dataset.board = board;
    this.canvas.dataset.bottom = this.bottom;
  }

  setBottom(side) {
    this.bottom = side;
    this.canvas.dataset.bottom = side;
    this.draw();
  }

  reset() {
    this.path = [];
    this.draw();
  }

  /** Return the legal moves that begin with the squares chosen so far. */
  candidates() {
    if (this.player === null || this.state.turn !== this.player) return [];
    const path = this.path;
    return this.state.legalMoves().filter((move) => path.every((square, index) => move.path[index] === square));
  }

  /** Return the squares a click may choose next: pieces to start with, or the next landing. */
  targets() {
    const index = this.path.length;
    return [...new Set(this.candidates().map((move) => move.path[index]).filter((square) => square !== undefined))];
  }

  /** Choose `square` as the next square of the move; send the move once it is complete. */
  choose(square) {
    if (this.path.length === 0 || this.targets().includes(square) === false) {
      // A click on another piece of one's own that can move starts over from it.
      const starts = this.player !== null && this.state.turn === this.player
        ? new Set(this.state.legalMoves().map((move) => move.path[0])) : new Set();
      this.path = starts.has(square) ? [square] : [];
      this.draw();
      return;
    }
    this.path = [...this.path, square];
    const complete = this.candidates().find((move) => move.path.length === this.path.length);
    if (complete) {
      const names = complete.path.map(squareName);
      this.last = complete.path;
      this.path = [];
      // Shown at once; the server's answer confirms it (or the page puts the position back).
      this.state.apply(complete);
      this.draw();
      if (this.onMove) this.onMove(names);
      return;
    }
    this.draw();
  }

  /** Return the geometry of the board in CSS pixels: the square size and each square's top left corner. */
  squareAt(x, y) {
    const size = this.canvas.clientWidth / 8;
    const column = Math.floor(x / size);
    const rowFromTop = Math.floor(y / size);
    if (column < 0 || column > 7 || rowFromTop < 0 || rowFromTop > 7) return null;
    // White at the bottom: row 8 is at the top, as the protocol's board string has it.
    return this.bottom === "w" ? rowFromTop * 8 + column : (7 - rowFromTop) * 8 + (7 - column);
  }

  /** Return the centre of `square` in CSS pixels from the canvas's top left corner. */
  centre(square) {
    const size = this.canvas.clientWidth / 8;
    let column = square % 8;
    let rowFromTop = Math.floor(square / 8);
    if (this.bottom !== "w") {
      column = 7 - column;
      rowFromTop = 7 - rowFromTop;
    }
    return [(column + 0.5) * size, (rowFromTop + 0.5) * size];
  }

  _point(event) {
    const rect = this.canvas.getBoundingClientRect();
    return [event.clientX - rect.left, event.clientY - rect.top];
  }

  _down(event) {
    const square = this.squareAt(...this._point(event));
    if (square === null) return;
    this.canvas.focus({ preventScroll: true });
    this.choose(square);
    if (this.path.length > 0) {
      this.drag = { from: square, at: this._point(event), moved: false };
      this.canvas.setPointerCapture(event.pointerId);
    }
  }

  _moveDrag(event) {
    if (!this.drag) return;
    const at = this._point(event);
    if (Math.hypot(at[0] - this.drag.at[0], at[1] - this.drag.at[1]) > 4) this.drag.moved = true;
    this.drag.at = at;
    this.draw();
  }

  _up(event) {
    const drag = this.drag;
    this.drag = null;
    if (!drag) return;
    if (drag.moved) {
      const square = this.squareAt(...this._point(event));
      if (square !== null && square !== drag.from && this.targets().includes(square)) {
        this.choose(square);
        return;
      }
    }
    this.draw();
  }

  _cancelDrag() {
    this.drag = null;
    this.draw();
  }

  draw() {
    const canvas = this.canvas;
    const ratio = window.devicePixelRatio || 1;
    const width = canvas.clientWidth;
    if (!width) return;
    if (canvas.width !== Math.round(width * ratio)) {
      canvas.width = Math.round(width * ratio);
      canvas.height = Math.round(width * ratio);
    }
    const context = this.context;
    context.setTransform(ratio, 0, 0, ratio, 0, 0);
    const size = width / 8;
    for (let square = 0; square < 64; square++) {
      const [x, y] = this.centre(square);
      const [column, row] = coordinates(square);
      context.fillStyle = (column + 1 + row) % 2 === 0 ? COLOURS.dark : COLOURS.light;
      context.fillRect(x - size / 2, y - size / 2, size, size);
    }
    for (const square of this.last) this._fill(square, COLOURS.last, size);
    this._labels(size);
    const moving = this.path.length ? this.path[0] : null;
    const captured = new Set(
      this.path.length > 1 ? this.candidates().flatMap((move) => move.captured.slice(0, this.path.length - 1)) : [],
    );
    this.state.board.forEach((piece, square) => {
      if (piece === "0" || square === moving) return;
      this._piece(this.centre(square), piece, size, captured.has(square) ? 0.35 : 1);
    });
    if (this.player !== null && this.state.turn === this.player && this.path.length === 0) {
      for (const square of new Set(this.state.legalMoves().map((move) => move.path[0]))) {
        this._ring(square, COLOURS.movable, size);
      }
    }
    if (moving !== null) {
      const at = this.drag && this.drag.moved ? this.drag.at : this.centre(this.path[this.path.length - 1]);
      this._ring(this.path[this.path.length - 1], COLOURS.selected, size);
      this._piece(at, this.state.board[moving], size, 1);
      for (const square of this.targets()) this._dot(square, size);
    }
  }

  _fill(square, colour, size) {
    const [x, y] = this.centre(square);
    this.context.fillStyle = colour;
    this.context.fillRect(x - size / 2, y - size / 2, size, size);
  }

  _ring(square, colour, size) {
    const [x, y] = this.centre(square);
    const context = this.context;
    context.strokeStyle = colour;
    context.lineWidth = Math.max(2, size * 0.06);
    context.strokeRect(x - size / 2 + 2, y - size / 2 + 2, size - 4, size - 4);
  }

  _dot(square, size) {
    const [x, y] = this.centre(square);
    const context = this.context;
    context.fillStyle = COLOURS.target;
    context.beginPath();
    context.arc(x, y, size * 0.16, 0, 2 * Math.PI);
    context.fill();
  }

  _piece([x, y], piece, size, alpha) {
    const context = this.context;
    const white = piece.toLowerCase() === "w";
    context.globalAlpha = alpha;
    context.fillStyle = white ? COLOURS.white : COLOURS.black;
    context.strokeStyle = white ? COLOURS.whiteEdge : COLOURS.blackEdge;
    context.lineWidth = Math.max(1.5, size * 0.04);
    context.beginPath();
    context.arc(x, y, size * 0.38, 0, 2 * Math.PI);
    context.fill();
    context.stroke();
    context.beginPath();
    context.arc(x, y, size * 0.27, 0, 2 * Math.PI);
    context.stroke();
    if (piece === piece.toUpperCase()) {
      // A king: a small crown.
      const w = size * 0.3;
      const h = size * 0.18;
      context.fillStyle = COLOURS.crown;
      context.beginPath();
      context.moveTo(x - w / 2, y + h / 2);
      context.lineTo(x - w / 2, y - h / 2);
      context.lineTo(x - w / 4, y);
      context.lineTo(x, y - h / 2 - 2);
      context.lineTo(x + w / 4, y);
      context.lineTo(x + w / 2, y - h / 2);
      context.lineTo(x + w / 2, y + h / 2);
      context.closePath();
      context.fill();
    }
    context.globalAlpha = 1;
  }

  _labels(size) {
    const context = this.context;
    context.font = `${Math.max(9, size * 0.16)}px system-ui, sans-serif`;
    context.textBaseline = "top";
    for (let square = 0; square < 64; square++) {
      const [x, y] = this.centre(square);
      const name = squareName(square);
      const [column, row] = coordinates(square);
      const dark = (column + 1 + row) % 2 === 0;
      context.fillStyle = dark ? "rgba(255, 244, 220, 0.75)" : "rgba(92, 58, 31, 0.6)";
      const bottomRow = this.bottom === "w" ? row === 1 : row === 8;
      const leftColumn = this.bottom === "w" ? column === 0 : column === 7;
      if (bottomRow) context.fillText(name[0], x + size * 0.32, y + size * 0.28);
      if (leftColumn) context.fillText(name[1], x - size * 0.46, y - size * 0.46);
    }
  }
}
