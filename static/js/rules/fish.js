// Hey, That's My Fish!: the zig-zag board, the penguins, the legal placements and moves, turns, removals and the end.
// The twin of games/rules/fish.py, which is the reference: same JSON, same order of placements and moves, same
// refusals word for word, same turn passing. tests/js/fish.test.mjs holds this module to the vectors that the Python
// module writes.
//
// A tile is [row, col]: 10 rows of 4, each odd row half a row lower and half a step to the right of the even rows
// around it. A move is {start: [row, col], end: [row, col]}.

export const ROWS = 10;
export const COLUMNS = 4;
export const COLOURS = Object.freeze(["red", "white", "brown", "black"]);
export const PLACEMENT = "placement";
export const MOVEMENT = "movement";
export const OVER = "over";

// The course's order of the six directions; each is [row change, column change on an even row, on an odd row].
export const DIRECTIONS = Object.freeze(["north", "northeast", "southeast", "south", "southwest", "northwest"]);
const STEPS = {
  north: [-2, 0, 0],
  northeast: [-1, 0, 1],
  southeast: [1, 0, 1],
  south: [2, 0, 0],
  southwest: [1, -1, 0],
  northwest: [-1, -1, 0],
};

/** An action the rules refuse; `message` is the text for a person, word for word Python's. */
export class IllegalAction extends Error {
  constructor(message) {
    super(message);
    this.name = "IllegalAction";
  }
}

/** Out of turn, in the wrong phase, or a move the rules do not allow (the protocol's Invalid_Action). */
export class IllegalMove extends IllegalAction {
  constructor(message) {
    super(message);
    this.name = "IllegalMove";
  }
}

/** A tile off the board or a hole, or a placement on a penguin (the protocol's Invalid_Coordinate). */
export class BadTile extends IllegalAction {
  constructor(message) {
    super(message);
    this.name = "BadTile";
  }
}

/** Return how many penguins each of `players` players has: 6 − N. */
export function penguinsEach(players) {
  return 6 - players;
}

export function onBoard(row, col) {
  return row >= 0 && row < ROWS && col >= 0 && col < COLUMNS;
}

/** Return the tile next to (row, col) in `direction`, which may be off the board. */
export function neighbour(row, col, direction) {
  const [rows, even, odd] = STEPS[direction];
  return [row + rows, col + (row % 2 !== 0 ? odd : even)];
}

/** Return the tiles of the straight line from (row, col) in `direction`, nearest first, up to the board's edge. */
export function line(row, col, direction) {
  const tiles = [];
  let [r, c] = neighbour(row, col, direction);
  while (onBoard(r, c)) {
    tiles.push([r, c]);
    [r, c] = neighbour(r, c, direction);
  }
  return tiles;
}

const key = (row, col) => row * COLUMNS + col;
// Every tile's six straight lines, in the course's order of directions, by `key`.
const LINES = Array.from({ length: ROWS * COLUMNS }, (_, index) =>
  DIRECTIONS.map((direction) => line(Math.floor(index / COLUMNS), index % COLUMNS, direction)),
);

const tileName = ([row, col]) => `(${row}, ${col})`;
const same = (a, b) => a[0] === b[0] && a[1] === b[1];

/** A position: the fish on each tile (0: a hole), each seat's penguins in placement order, the scores, the seats
 * removed, the phase and the seat on turn (null once the game is over). */
export class State {
  constructor(board, penguins, scores, removed, phase = PLACEMENT, turn = 0) {
    this.board = board;
    this.penguins = penguins;
    this.scores = scores;
    this.removed = removed;
    this.phase = phase;
    this.turn = turn;
  }

  /** Return the start of a game of `players` on `board`: the placement phase, red on turn. */
  static start(board, players) {
    return new State(
      board.map((row) => [...row]),
      Array.from({ length: players }, () => []),
      Array(players).fill(0),
      Array(players).fill(false),
    );
  }

  /** Rebuild a state from the JSON of games/rules/fish.py (`State.to_json`). */
  static fromJSON(data) {
    const turn = data.turn === null ? null : COLOURS.indexOf(data.turn);
    return new State(
      data.board.map((row) => [...row]),
      data.players.map((player) => player.places.map(({ row, col }) => [row, col])),
      data.players.map((player) => player.score),
      data.players.map((player) => data.removed.includes(player.color)),
      data.phase,
      turn,
    );
  }

  toJSON() {
    return {
      board: this.board.map((row) => [...row]),
      players: this.penguins.map((places, seat) => ({
        color: COLOURS[seat],
        score: this.scores[seat],
        places: places.map(([row, col]) => ({ row, col })),
      })),
      removed: COLOURS.slice(0, this.players).filter((_, seat) => this.removed[seat]),
      phase: this.phase,
      turn: this.turn === null ? null : COLOURS[this.turn],
    };
  }

  copy() {
    return new State(
      this.board.map((row) => [...row]),
      this.penguins.map((places) => places.map((tile) => [...tile])),
      [...this.scores],
      [...this.removed],
      this.phase,
      this.turn,
    );
  }

  get players() {
    return this.penguins.length;
  }

  // --- The board ---------------------------------------------------------------------------------------------------

  /** Return the keys of the tiles that have a penguin. */
  taken() {
    return new Set(this.penguins.flatMap((places) => places.map(([row, col]) => key(row, col))));
  }

  /** Return the seat whose penguin stands on (row, col), or null. */
  owner(row, col) {
    const seat = this.penguins.findIndex((places) => places.some((tile) => same(tile, [row, col])));
    return seat < 0 ? null : seat;
  }

  /** Return whether a penguin may stand on (row, col): on the board, not a hole, no penguin. */
  isFree(row, col) {
    return this._free(row, col, this.taken());
  }

  _free(row, col, taken) {
    return onBoard(row, col) && this.board[row][col] > 0 && !taken.has(key(row, col));
  }

  /** Throw BadTile if (row, col) is off the board or a hole. */
  checkTile(row, col) {
    if (!(row >= 0 && row < ROWS)) throw new BadTile(`row ${row} is not on the board (rows 0 to ${ROWS - 1})`);
    if (!(col >= 0 && col < COLUMNS)) {
      throw new BadTile(`column ${col} is not on the board (columns 0 to ${COLUMNS - 1})`);
    }
    if (this.board[row][col] === 0) throw new BadTile(`${tileName([row, col])} is a hole`);
  }

  /** Return the fish left on the board, tiles under penguins included. */
  fish() {
    return this.board.flat().reduce((total, fish) => total + fish, 0);
  }

  // --- Who acts ----------------------------------------------------------------------------------------------------

  /** Return how many penguins `seat` has still to place (none once removed). */
  leftToPlace(seat) {
    return this.removed[seat] ? 0 : penguinsEach(this.players) - this.penguins[seat].length;
  }

  /** Return whether one of `seat`'s penguins has a move. */
  canMove(seat) {
    const taken = this.taken();
    return this.penguins[seat].some(([row, col]) =>
      LINES[key(row, col)].some((tiles) => tiles.length > 0 && this._free(...tiles[0], taken)),
    );
  }

  _mayAct(seat) {
    if (this.removed[seat]) return false;
    if (this.phase === PLACEMENT) return this.leftToPlace(seat) > 0;
    return this.phase === MOVEMENT && this.canMove(seat);
  }

  // The next seat after `last` that may act gets the turn (`last` itself comes last); the placement phase ends once
  // every seat still in has placed all its penguins, and the game once nobody may act.
  _passTurn(last) {
    if (this.phase === PLACEMENT && this.penguins.every((_, seat) => this.leftToPlace(seat) === 0)) {
      this.phase = MOVEMENT;
    }
    for (let step = 1; step <= this.players; step++) {
      const seat = (last + step) % this.players;
      if (this._mayAct(seat)) {
        this.turn = seat;
        return;
      }
    }
    this.phase = OVER;
    this.turn = null;
  }

  // --- Placements and moves ----------------------------------------------------------------------------------------

  /** Return the tiles where `seat` may place a penguin now, row by row (none when it may not place now). */
  legalPlacements(seat) {
    if (this.phase !== PLACEMENT || this.turn !== seat) return [];
    const taken = this.taken();
    const tiles = [];
    for (let row = 0; row < ROWS; row++) {
      for (let col = 0; col < COLUMNS; col++) if (this._free(row, col, taken)) tiles.push([row, col]);
    }
    return tiles;
  }

  /** Return the moves a penguin standing on (row, col) could make on the board as it is, whether or not one stands
   * there: the directions in the course's order, nearest tile first. Throw BadTile off the board or on a hole. */
  movesFrom(row, col) {
    this.checkTile(row, col);
    const taken = this.taken();
    const moves = [];
    for (const tiles of LINES[key(row, col)]) {
      for (const tile of tiles) {
        if (this.board[tile[0]][tile[1]] === 0 || taken.has(key(...tile))) break;
        moves.push({ start: [row, col], end: [...tile] });
      }
    }
    return moves;
  }

  /** Return every move `seat`'s penguins could make, whoever's turn it is: by penguin, direction, then distance. */
  movesOf(seat) {
    return this.penguins[seat].flatMap(([row, col]) => this.movesFrom(row, col));
  }

  /** Return the moves `seat` may make now (none when it may not move now). */
  legalMoves(seat) {
    if (this.phase !== MOVEMENT || this.turn !== seat) return [];
    return this.movesOf(seat);
  }

  _checkTurn(seat, phase) {
    if (this.phase === OVER) throw new IllegalMove("the game is over");
    if (!(seat >= 0 && seat < this.players)) {
      throw new IllegalMove(`there is no seat ${seat} in this game of ${this.players}`);
    }
    if (this.removed[seat]) throw new IllegalMove(`${COLOURS[seat]} was removed from the game`);
    if (this.phase !== phase) {
      if (phase === PLACEMENT) throw new IllegalMove("every penguin is placed: penguins move now");
      throw new IllegalMove("penguins cannot move before every penguin is placed");
    }
    if (this.turn !== seat) throw new IllegalMove(`it is ${COLOURS[this.turn]}'s turn, not ${COLOURS[seat]}'s`);
  }

  /** Throw the error that placing `seat`'s penguin on (row, col) would get, if any. */
  checkPlace(seat, row, col) {
    this._checkTurn(seat, PLACEMENT);
    this.checkTile(row, col);
    if (this.taken().has(key(row, col))) throw new BadTile(`${tileName([row, col])} already has a penguin`);
  }

  /** Throw the error that moving `seat`'s penguin from `start` to `end` would get, if any. */
  checkMove(seat, start, end) {
    this._checkTurn(seat, MOVEMENT);
    this.checkTile(...start);
    this.checkTile(...end);
    const taken = this.taken();
    if (!this.penguins[seat].some((tile) => same(tile, start))) {
      throw new IllegalMove(`${tileName(start)} has no ${COLOURS[seat]} penguin`);
    }
    if (same(start, end)) throw new IllegalMove("a penguin must move at least one tile");
    if (taken.has(key(...end))) throw new IllegalMove(`${tileName(end)} already has a penguin`);
    for (const tiles of LINES[key(...start)]) {
      const index = tiles.findIndex((tile) => same(tile, end));
      if (index < 0) continue;
      const way = `the way from ${tileName(start)} to ${tileName(end)}`;
      for (const tile of tiles.slice(0, index)) {
        if (this.board[tile[0]][tile[1]] === 0) throw new IllegalMove(`${way} crosses a hole at ${tileName(tile)}`);
        if (taken.has(key(...tile))) throw new IllegalMove(`${way} crosses a penguin at ${tileName(tile)}`);
      }
      return;
    }
    throw new IllegalMove(`${tileName(start)} to ${tileName(end)} is not a straight line`);
  }

  isLegalPlacement(seat, row, col) {
    return refusal(() => this.checkPlace(seat, row, col)) === null;
  }

  isLegalMove(seat, start, end) {
    return refusal(() => this.checkMove(seat, start, end)) === null;
  }

  /** Place `seat`'s next penguin on (row, col) and pass the turn; throw, changing nothing, if the rules refuse it. */
  place(seat, row, col) {
    this.checkPlace(seat, row, col);
    this.penguins[seat].push([row, col]);
    this._passTurn(seat);
  }

  /** Move `seat`'s penguin from `start` to `end`, score the tile it leaves (now a hole), pass the turn; return the
   * fish scored. Throw, changing nothing, if the rules refuse it. */
  move(seat, start, end) {
    this.checkMove(seat, start, end);
    const places = this.penguins[seat];
    places[places.findIndex((tile) => same(tile, start))] = [end[0], end[1]];
    const fish = this.board[start[0]][start[1]];
    this.board[start[0]][start[1]] = 0;
    this.scores[seat] += fish;
    this._passTurn(seat);
    return fish;
  }

  /** Take `seat` out of the game: its penguins leave the board, its score stays, the turn passes on if it was its
   * own. Return the tiles its penguins stood on. */
  remove(seat) {
    if (this.phase === OVER) throw new IllegalMove("the game is over");
    if (!(seat >= 0 && seat < this.players)) {
      throw new IllegalMove(`there is no seat ${seat} in this game of ${this.players}`);
    }
    if (this.removed[seat]) throw new IllegalMove(`${COLOURS[seat]} was removed from the game already`);
    const places = this.penguins[seat];
    this.penguins[seat] = [];
    this.removed[seat] = true;
    if (this.turn === seat) this._passTurn(seat);
    return places;
  }

  /** Make `seat`'s action, in the engine's JSON: {kind: "place", row, col}, {kind: "move", start, end} (each
   * {row, col}) or {kind: "remove"}. */
  apply(seat, action) {
    switch (action.kind) {
      case "place":
        return this.place(seat, action.row, action.col);
      case "move":
        return this.move(seat, [action.start.row, action.start.col], [action.end.row, action.end.col]);
      case "remove":
        return this.remove(seat);
      default:
        throw new IllegalMove(`unknown action ${JSON.stringify(String(action.kind).slice(0, 40))}`);
    }
  }

  // --- The end -----------------------------------------------------------------------------------------------------

  /** Return each seat's rank once the game is over (the seats still in by score, equal scores sharing a place; every
   * removed seat after them all), or null while it goes on or when every seat was removed. */
  ranks() {
    if (this.phase !== OVER || this.removed.every(Boolean)) return null;
    const scores = this.scores.filter((_, seat) => !this.removed[seat]);
    return this.scores.map((score, seat) =>
      this.removed[seat] ? scores.length + 1 : 1 + scores.filter((other) => other > score).length,
    );
  }

  /** Return {ranks, reason} once the game is over with a result, else null. */
  outcome() {
    const ranks = this.ranks();
    return ranks === null ? null : { ranks, reason: "score" };
  }

  /** Return the seats that won, in join order: still in, with the highest score. */
  winners() {
    const ranks = this.ranks();
    return ranks === null ? [] : ranks.flatMap((rank, seat) => (rank === 1 ? [seat] : []));
  }
}

function refusal(check) {
  try {
    check();
  } catch (error) {
    if (error instanceof IllegalAction) return error;
    throw error;
  }
  return null;
}
