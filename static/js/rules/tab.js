// Tâb: the board, the dice of sticks and the legal moves, as the rules page (spec/tab-rules.md) defines them.
// The twin of games/rules/tab.py, which is the reference: same rules, same move order, same messages, same JSON.
// tests/js/rules.test.mjs holds this module to the vectors that the Python module writes.

export const BLUE = "Blue";
export const RED = "Red";
export const COLORS = Object.freeze([BLUE, RED]);

export const MIN_SIZE = 7;
export const MAX_SIZE = 15;
export const DEFAULT_SIZE = 9;

const FROM = "from";
const TO = "to";

export const THROW_VALUES = Object.freeze([1, 2, 3, 4, 6]);
// Four fair sticks: the value is the number of light sides, none light counting as 6 (Sitteh).
export const THROW_PROBABILITIES = Object.freeze({ 6: 1 / 16, 1: 4 / 16, 2: 6 / 16, 3: 4 / 16, 4: 1 / 16 });
export const THROW_NAMES = Object.freeze({ 1: "Tâb", 2: "Itneyn", 3: "Teláteh", 4: "Arba'ah", 6: "Sitteh" });

/** An action the rules refuse; `message` is the text shown to the player, word for word Python's. */
export class IllegalMove extends Error {
  /** Create the refusal with its user-facing `message`. */
  constructor(message) {
    super(message);
    this.name = "IllegalMove";
  }
}

/** Return the other player's color. */
export function opponent(color) {
  return color === BLUE ? RED : BLUE;
}

/** Return the position of `cell` along the path of `color` (its own row is the result divided by `size`). */
export function ownPathPosition(cell, color, size) {
  if (color === BLUE) return cell;
  return (3 - Math.floor(cell / size)) * size + (cell % size);
}

/** Return the cell at `position` along the path of `color` (mirroring the rows is its own inverse). */
export function cellOf(position, color, size) {
  return ownPathPosition(position, color, size);
}

/** Return the row of `cell` as `color` sees it: 0 is its home row, 3 the opponent's. */
export function ownRow(cell, color, size) {
  const row = Math.floor(cell / size);
  return color === BLUE ? row : 3 - row;
}

/** Return `size` if it is a valid number of columns, else throw a RangeError. */
/** Where `cell` is as a person reads it, the initial player's side at the bottom (rules/tab.py's cell_name). */
export function cellName(cell, size) {
  const row = Math.floor(cell / size);
  const offset = cell % size;
  // Rows run left to right from the initial player's side, then back, as the pieces travel.
  const column = row % 2 === 0 ? offset : size - 1 - offset;
  return `row ${row + 1}, column ${column + 1}`;
}

export function checkSize(size) {
  if (!Number.isInteger(size) || size < MIN_SIZE || size > MAX_SIZE || size % 2 === 0) {
    throw new RangeError(`invalid size ${JSON.stringify(size) ?? String(size)}`);
  }
  return size;
}

// Pieces and throws are immutable values, like Python's frozen dataclasses: the few distinct ones are shared,
// so that copying a board copies references and a move allocates no piece.

const PIECES = COLORS.flatMap((color) =>
  [0, 1, 2, 3].map((bits) => Object.freeze({ color, inMotion: (bits & 1) > 0, reachedLastRow: (bits & 2) > 0 })),
);

/** Return the (shared, frozen) piece of `color` with these two facts about its past. */
export function pieceOf(color, inMotion = false, reachedLastRow = false) {
  if (color !== BLUE && color !== RED) throw new RangeError(`invalid color ${JSON.stringify(color)}`);
  return PIECES[(color === BLUE ? 0 : 4) + (inMotion ? 1 : 0) + (reachedLastRow ? 2 : 0)];
}

// The sixteen throws, by their sticks as bits (stick i light = bit i).
const DICE = Array.from({ length: 16 }, (_, bits) => {
  const stickValues = Object.freeze([0, 1, 2, 3].map((stick) => (bits & (1 << stick)) > 0));
  const value = stickValues.filter(Boolean).length || 6;
  return Object.freeze({ stickValues, value, keepPlaying: value === 1 || value === 4 || value === 6 });
});

/** Return the throw (the API's `dice`) whose four sticks are `stickValues`, true for a light side. */
export function throwFromSticks(stickValues) {
  if (!Array.isArray(stickValues) || stickValues.length !== 4 || !stickValues.every((s) => typeof s === "boolean")) {
    throw new RangeError("a throw is four booleans");
  }
  let bits = 0;
  for (let stick = 0; stick < 4; stick++) if (stickValues[stick]) bits |= 1 << stick;
  return DICE[bits];
}

/** Throw four fair sticks with `random`, a function returning numbers in [0, 1). */
export function randomThrow(random = Math.random) {
  let bits = 0;
  for (let stick = 0; stick < 4; stick++) if (random() < 0.5) bits |= 1 << stick;
  return DICE[bits];
}

/** Return the throw with `value` that Python's `Throw.of_value` gives: its first `value` sticks light (none for 6). */
export function throwOfValue(value) {
  if (!THROW_VALUES.includes(value)) throw new RangeError(`no throw has the value ${value}`);
  return DICE[value === 6 ? 0 : (1 << value) - 1];
}

// The paths, walked once per board size: for a piece of a color that has or has not reached its last row,
// by throw value then by cell, the cells it lands on when nothing is in its way (the row-3 branch first).

/** Return where one step leads from own path `position`, the row-3 branch first at the fork. */
function nextPositions(position, reachedLastRow, size) {
  if (position === 3 * size - 1) return reachedLastRow ? [size] : [3 * size, size];
  if (position === 4 * size - 1) return [2 * size];
  return [position + 1];
}

/** Return, by throw value then by cell, where a piece of `color` lands on an empty board. */
function pathLandings(size, color, reachedLastRow) {
  const byValue = [];
  for (let value = 0; value <= 6; value++) {
    const byCell = [];
    for (let cell = 0; cell < 4 * size; cell++) {
      let walks = THROW_VALUES.includes(value) ? [[ownPathPosition(cell, color, size), reachedLastRow]] : [];
      for (let step = 0; step < value; step++) {
        walks = walks.flatMap(([position, reached]) =>
          nextPositions(position, reached, size).map((next) => [next, reached || next >= 3 * size]),
        );
      }
      byCell.push(Object.freeze([...new Set(walks.map(([position]) => cellOf(position, color, size)))]));
    }
    byValue.push(Object.freeze(byCell));
  }
  return Object.freeze(byValue);
}

// By size: Blue's fresh and veteran tables, then Red's (a veteran has reached its last row).
const LANDINGS = [];

/** Return the landing table for a piece of `color` on a board of `size`. */
function landingsOf(size, color, reachedLastRow) {
  const tables = (LANDINGS[size] ??= [
    pathLandings(size, BLUE, false),
    pathLandings(size, BLUE, true),
    pathLandings(size, RED, false),
    pathLandings(size, RED, true),
  ]);
  return tables[(color === BLUE ? 0 : 2) + (reachedLastRow ? 1 : 0)];
}

/** Return whether `color` still has a piece in its own row 0. */
function hasPiecesInFirstRow(pieces, color, size) {
  const start = color === BLUE ? 0 : 3 * size;
  for (let cell = start; cell < start + size; cell++) {
    const piece = pieces[cell];
    if (piece && piece.color === color) return true;
  }
  return false;
}

/**
 * Push onto `moves` the legal moves of `color` with `value` from the cells `first` … `end - 1`, in Python's order,
 * and return how many there are; with `moves` null, stop at the first one. The single place that applies every rule.
 */
function findMoves(state, color, value, first, end, moves) {
  const { size, pieces } = state;
  const fresh = landingsOf(size, color, false)[value];
  const veteran = landingsOf(size, color, true)[value];
  // A piece in the last row waits while its player has a piece in the first row.
  let frozenStart = 0;
  let frozenEnd = 0;
  if (hasPiecesInFirstRow(pieces, color, size)) {
    frozenStart = color === BLUE ? 3 * size : 0;
    frozenEnd = frozenStart + size;
  }
  let found = 0;
  for (let origin = first; origin < end; origin++) {
    const piece = pieces[origin];
    if (!piece || piece.color !== color || (!piece.inMotion && value !== 1)) continue;
    if (origin >= frozenStart && origin < frozenEnd) continue;
    const landings = (piece.reachedLastRow ? veteran : fresh)[origin];
    for (let index = 0; index < landings.length; index++) {
      const destination = landings[index];
      const target = pieces[destination];
      if (target && target.color === color) continue;
      if (moves === null) return 1;
      moves.push({ origin, destination, captures: Boolean(target) });
      found++;
    }
  }
  return found;
}

/** Return whether the player on turn has a legal move with the current throw. */
function canMove(state) {
  const { dice } = state;
  if (dice === null || state.winner !== null) return false;
  return findMoves(state, state.turn, dice.value, 0, state.pieces.length, null) > 0;
}

/** Return whether `color` has a piece left on `pieces`. */
function hasPieces(pieces, color) {
  for (let cell = 0; cell < pieces.length; cell++) {
    const piece = pieces[cell];
    if (piece && piece.color === color) return true;
  }
  return false;
}

/** Make a move already known to be legal, hand the turn on, and return it. */
function makeMove(state, origin, destination) {
  const { pieces, size } = state;
  const { color, reachedLastRow } = pieces[origin];
  const captures = Boolean(pieces[destination]);
  pieces[destination] = pieceOf(color, true, reachedLastRow || ownRow(destination, color, size) === 3);
  pieces[origin] = null;
  const { keepPlaying } = state.dice;
  state.dice = null;
  state.step = FROM;
  state.cell = origin;
  state.selected = [origin, destination];
  const rival = opponent(color);
  if (captures && !hasPieces(pieces, rival)) state.winner = color;
  else if (!keepPlaying) state.turn = rival;
  return { origin, destination, captures };
}

/** Return whether `cell` is an index of the board of `state`. */
function isCell(state, cell) {
  return Number.isInteger(cell) && cell >= 0 && cell < state.pieces.length;
}

/** A game of Tâb between Blue (the initial player) and Red; actions mutate it or throw IllegalMove. */
export class State {
  /** Create a state from its fields, the same as the JSON's (`dice` as `throwFromSticks` returns it). */
  constructor(size, pieces, turn, dice = null, step = FROM, cell = null, selected = null, winner = null) {
    this.size = size;
    this.pieces = pieces;
    this.turn = turn;
    this.dice = dice;
    this.step = step;
    this.cell = cell;
    this.selected = selected;
    this.winner = winner;
  }

  /** Return the starting position: Blue on 0 … size-1, Red on 3·size … 4·size-1, Blue to throw. */
  static initial(size = DEFAULT_SIZE) {
    checkSize(size);
    const pieces = new Array(4 * size).fill(null);
    pieces.fill(pieceOf(BLUE), 0, size).fill(pieceOf(RED), 3 * size);
    return new State(size, pieces, BLUE);
  }

  /** Rebuild a state from Python's `State.to_json()` format (or `toJSON`'s), validating it as Python does. */
  static fromJSON(json) {
    const size = checkSize(json.size);
    const pieces = Array.from(json.pieces, (entry) =>
      entry === null ? null : pieceOf(entry.color, Boolean(entry.inMotion), Boolean(entry.reachedLastRow)),
    );
    if (pieces.length !== 4 * size) {
      throw new RangeError(`a board of size ${size} has ${4 * size} cells, not ${pieces.length}`);
    }
    if (!COLORS.includes(json.turn) || !(json.winner === null || COLORS.includes(json.winner))) {
      throw new RangeError("invalid turn, winner or step");
    }
    if (json.step !== FROM && json.step !== TO) throw new RangeError("invalid turn, winner or step");
    let dice = null;
    if (json.dice !== null) {
      const sticks = json.dice.stickValues;
      if (!Array.isArray(sticks) || sticks.length !== 4) throw new RangeError("a throw is four booleans");
      dice = throwFromSticks(sticks.map(Boolean));
    }
    const selected = json.selected === null ? null : [...json.selected];
    return new State(size, pieces, json.turn, dice, json.step, json.cell, selected, json.winner);
  }

  /** Return the state in Python's `State.to_json()` format (what the server stores). */
  toJSON() {
    const { dice } = this;
    const throwJSON = dice && { stickValues: [...dice.stickValues], value: dice.value, keepPlaying: dice.keepPlaying };
    return {
      size: this.size,
      pieces: this.pieces.map((entry) =>
        entry ? { color: entry.color, inMotion: entry.inMotion, reachedLastRow: entry.reachedLastRow } : null,
      ),
      turn: this.turn,
      dice: throwJSON,
      step: this.step,
      cell: this.cell,
      selected: this.selected === null ? null : [...this.selected],
      winner: this.winner,
    };
  }

  /** Return an independent copy (pieces and throws are immutable, so the board is copied shallowly). */
  clone() {
    const { selected } = this;
    return new State(
      this.size,
      this.pieces.slice(),
      this.turn,
      this.dice,
      this.step,
      this.cell,
      selected === null ? null : selected.slice(),
      this.winner,
    );
  }

  /** Return the legal destinations of the piece on `cell` with `value`, the row-3 branch first. */
  destinations(cell, value) {
    if (!isCell(this, cell) || !THROW_VALUES.includes(value) || !this.pieces[cell]) return [];
    const moves = [];
    findMoves(this, this.pieces[cell].color, value, cell, cell + 1, moves);
    return moves.map((move) => move.destination);
  }

  /** Return the moves `{origin, destination, captures}` of the player on turn with the current throw, by origin. */
  legalMoves() {
    const moves = [];
    if (this.dice !== null && this.winner === null) {
      findMoves(this, this.turn, this.dice.value, 0, this.pieces.length, moves);
    }
    return moves;
  }

  /** Whether the player on turn threw, cannot move and may not throw again. */
  get mustPass() {
    return this.dice !== null && !this.dice.keepPlaying && this.winner === null && !canMove(this);
  }

  /** Whether the player on turn may throw the sticks now. */
  get canThrow() {
    if (this.winner !== null) return false;
    return this.dice === null || (this.dice.keepPlaying && !canMove(this));
  }

  /** Use `dice` (as `throwFromSticks` returns it) as the throw of the player on turn. */
  throw(dice) {
    const thrown = throwFromSticks(dice.stickValues);
    if (this.winner !== null) throw new IllegalMove("The game is over");
    if (this.dice !== null) {
      if (canMove(this)) throw new IllegalMove("You already rolled the dice and have valid moves");
      if (!this.dice.keepPlaying) throw new IllegalMove("You already rolled the dice and must pass");
    }
    this.dice = thrown;
    this.step = FROM;
    // `cell` and `selected` describe the last play; a new throw starts a new one (as the course's clients expect).
    this.cell = null;
    this.selected = null;
  }

  /** Pass the turn to the opponent, which is allowed only when the throw can be used in no way. */
  passTurn() {
    if (this.winner !== null) throw new IllegalMove("The game is over");
    if (this.dice === null) throw new IllegalMove("You must roll the dice first");
    if (canMove(this)) throw new IllegalMove("You already rolled the dice and have valid moves");
    if (this.dice.keepPlaying) throw new IllegalMove("You already rolled the dice but can roll it again");
    this.dice = null;
    this.turn = opponent(this.turn);
    this.step = FROM;
    this.cell = null;
    this.selected = null;
  }

  /** Act on a click on `cell` (the API's `notify`); return the move made, or null after a (de)selection. */
  select(cell) {
    if (this.winner !== null) throw new IllegalMove("The game is over");
    if (!Number.isInteger(cell)) throw new IllegalMove("cell is not an integer");
    if (cell < 0) throw new IllegalMove("cell is negative");
    if (cell >= this.pieces.length) throw new IllegalMove("cell is out of the board");
    if (this.dice === null) throw new IllegalMove("You must roll the dice first");

    if (this.step === TO && this.cell !== null) {
      if (cell === this.cell) {
        this.step = FROM;
        this.cell = null;
        this.selected = null;
        return null;
      }
      if (this.selected !== null && this.selected.includes(cell)) return makeMove(this, this.cell, cell);
      throw new IllegalMove("Invalid move: must play the dice's value");
    }

    const piece = this.pieces[cell];
    if (!piece) throw new IllegalMove("No piece on that cell");
    if (piece.color !== this.turn) throw new IllegalMove("That piece is not yours");
    const { value } = this.dice;
    if (!piece.inMotion && value !== 1) throw new IllegalMove("A piece's first move must be a tâb (1)");
    if (ownRow(cell, piece.color, this.size) === 3 && hasPiecesInFirstRow(this.pieces, piece.color, this.size)) {
      throw new IllegalMove("You can't move in the last row while you have pieces in the first row");
    }
    const destinations = this.destinations(cell, value);
    if (destinations.length === 0) throw new IllegalMove("cannot capture to your own piece");
    if (destinations.length === 1) return makeMove(this, cell, destinations[0]);
    this.step = TO;
    this.cell = cell;
    this.selected = destinations;
    return null;
  }

  /** Make `move` (`{origin, destination, captures}`) if it is legal now, whatever piece is selected. */
  apply(move) {
    const origin = move?.origin;
    const candidates = [];
    if (this.dice !== null && this.winner === null && isCell(this, origin)) {
      findMoves(this, this.turn, this.dice.value, origin, origin + 1, candidates);
    }
    const legal = candidates.some(
      (candidate) => candidate.destination === move.destination && candidate.captures === move.captures,
    );
    if (!legal) throw new IllegalMove("Invalid move");
    makeMove(this, origin, move.destination);
  }

  /** Return the winner's color, or null while both players have pieces. */
  outcome() {
    return this.winner;
  }
}
