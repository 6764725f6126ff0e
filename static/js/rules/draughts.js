// English draughts: the board, the men and kings and their legal moves, as the room server plays them.
// The twin of games/rules/draughts.py, which is the reference: same squares, same move order, same messages.
// tests/js/draughts.test.mjs holds this module to the vectors that the Python module writes.
//
// The 64 squares are numbered as the protocol writes its board: row 8 first, column a first in each row.

export const WHITE = "w";
export const BLACK = "b";
export const EMPTY = "0";
export const START = "0b0b0b0bb0b0b0b00b0b0b0b0000000000000000w0w0w0w00w0w0w0ww0w0w0w0";
const COLUMNS = "abcdefgh";

const KING_STEPS = [[1, 1], [-1, 1], [1, -1], [-1, -1]];
const MAN_STEPS = { w: [[1, 1], [-1, 1]], b: [[1, -1], [-1, -1]] };
const FAR_ROW = { w: 8, b: 1 };

/** A move the rules refuse; `message` is the text shown to the player, word for word Python's. */
export class IllegalMove extends Error {
  constructor(message) {
    super(message);
    this.name = "IllegalMove";
  }
}

/** Return the protocol's name of a square index: 0 is "a8", 63 is "h1". */
export function squareName(square) {
  return `${COLUMNS[square % 8]}${8 - Math.floor(square / 8)}`;
}

/** Return the index of a square named like "c3" (lower case), or throw IllegalMove. */
export function squareIndex(name) {
  if (typeof name !== "string" || name.length !== 2 || !COLUMNS.includes(name[0]) || !"12345678".includes(name[1])) {
    throw new IllegalMove(`${JSON.stringify(String(name).slice(0, 8)).replaceAll('"', "'")} is not a square`);
  }
  return (8 - Number(name[1])) * 8 + COLUMNS.indexOf(name[0]);
}

/** Return [column 0–7, row 1–8] of a square. */
export function coordinates(square) {
  return [square % 8, 8 - Math.floor(square / 8)];
}

function squareAt(column, row) {
  return column >= 0 && column < 8 && row >= 1 && row <= 8 ? (8 - row) * 8 + column : null;
}

export function isDark(square) {
  const [column, row] = coordinates(square);
  return (column + 1 + row) % 2 === 0;
}

export function opponent(side) {
  return side === WHITE ? BLACK : WHITE;
}

/** Return the side of a piece ("w" or "b"), or null for an empty square. */
export function sideOf(piece) {
  return piece === EMPTY ? null : piece.toLowerCase();
}

function directions(piece) {
  return piece === piece.toUpperCase() ? KING_STEPS : MAN_STEPS[piece];
}

/** A position: the 64 squares as the protocol's board string, and the side to move. */
export class State {
  constructor(board = START, turn = WHITE) {
    if (typeof board !== "string" || board.length !== 64 || /[^0wWbB]/.test(board)) {
      throw new Error("a board is 64 characters of 0, w, W, b and B");
    }
    this.board = board.split("");
    this.turn = turn;
    this._moves = null;
  }

  get text() {
    return this.board.join("");
  }

  copy() {
    return new State(this.text, this.turn);
  }

  /** Return every legal move of the side to move, {path, captured, crowned}: its captures if any, else its steps. */
  legalMoves() {
    if (this._moves === null) {
      const own = [];
      this.board.forEach((piece, square) => {
        if (piece.toLowerCase() === this.turn) own.push(square);
      });
      const captures = own.flatMap((square) => this._capturesFrom(square));
      this._moves = captures.length ? captures : own.flatMap((square) => this._stepsFrom(square));
    }
    return this._moves;
  }

  _stepsFrom(square) {
    const piece = this.board[square];
    const [column, row] = coordinates(square);
    const moves = [];
    for (const [dc, dr] of directions(piece)) {
      const target = squareAt(column + dc, row + dr);
      if (target !== null && this.board[target] === EMPTY) {
        const crowned = piece === piece.toLowerCase() && row + dr === FAR_ROW[piece];
        moves.push({ path: [square, target], captured: [], crowned });
      }
    }
    return moves;
  }

  _capturesFrom(start) {
    const board = this.board;
    const piece = board[start];
    const enemy = opponent(piece.toLowerCase());
    const steps = directions(piece);
    const farRow = piece === piece.toUpperCase() ? null : FAR_ROW[piece];
    const moves = [];
    const extend = (square, path, captured) => {
      const [column, row] = coordinates(square);
      let jumped = false;
      for (const [dc, dr] of steps) {
        const over = squareAt(column + dc, row + dr);
        const landing = squareAt(column + 2 * dc, row + 2 * dr);
        if (over === null || landing === null || captured.includes(over)) continue;
        if (board[over].toLowerCase() !== enemy) continue;
        // The piece's own starting square is empty during its move; captured pieces stay until it ends.
        if (board[landing] !== EMPTY && landing !== start) continue;
        jumped = true;
        if (row + 2 * dr === farRow) {
          moves.push({ path: [...path, landing], captured: [...captured, over], crowned: true });
        } else {
          extend(landing, [...path, landing], [...captured, over]);
        }
      }
      if (!jumped && captured.length) moves.push({ path, captured, crowned: false });
    };
    extend(start, [start], []);
    return moves;
  }

  /** Return the legal move with these squares (indices), or throw IllegalMove saying why there is none. */
  find(path) {
    if (path.length < 2) throw new IllegalMove("a move names at least two squares");
    for (let i = 1; i < path.length; i++) {
      if (path[i] === path[i - 1]) throw new IllegalMove("a square twice in a row");
    }
    if (sideOf(this.board[path[0]]) !== this.turn) {
      throw new IllegalMove(`no piece of yours on ${squareName(path[0])}`);
    }
    const legal = this.legalMoves();
    const same = (a, b) => a.length === b.length && a.every((square, i) => square === b[i]);
    for (const move of legal) {
      if (same(move.path, path)) return move;
    }
    const capturing = legal.length > 0 && legal[0].captured.length > 0;
    if (capturing && !legal.some((move) => move.path[0] === path[0])) throw new IllegalMove("capture is mandatory");
    if (capturing && legal.some((move) => same(move.path.slice(0, path.length), path))) {
      throw new IllegalMove("the capture must go on while the piece can jump");
    }
    if (capturing && path.length === 2 && [7, 9].includes(Math.abs(path[1] - path[0]))) {
      throw new IllegalMove("capture is mandatory");
    }
    throw new IllegalMove("not a legal move");
  }

  /** Make a legal move (from `legalMoves` or `find`) and pass the turn. */
  apply(move) {
    const start = move.path[0];
    const end = move.path[move.path.length - 1];
    const piece = this.board[start];
    this.board[start] = EMPTY;
    for (const square of move.captured) this.board[square] = EMPTY;
    this.board[end] = move.crowned ? piece.toUpperCase() : piece;
    this.turn = opponent(this.turn);
    this._moves = null;
  }

  /** Return the side that has won (the side to move has no legal move), or null while the game goes on. */
  winner() {
    return this.legalMoves().length ? null : opponent(this.turn);
  }
}

/** Return the number of move sequences of `depth` moves from `state`. */
export function perft(state, depth) {
  const moves = state.legalMoves();
  if (depth <= 1) return depth === 1 ? moves.length : 1;
  let total = 0;
  for (const move of moves) {
    const child = state.copy();
    child.apply(move);
    total += perft(child, depth - 1);
  }
  return total;
}
