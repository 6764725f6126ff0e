// The CPU player (static/js/ai.js): legal at every level, greedy about captures, strong and quick at the top.
// Positions are drawn as in tests/test_rules_tab.py: Blue's view, row 3 on top, one token per cell:
// `.` empty, `b`/`r` a piece that never moved, `B`/`R` in motion, `B*`/`R*` has reached its last row.

import assert from "node:assert/strict";
import { test } from "node:test";

import { LEVELS, chooseMove } from "../../static/js/ai.js";
import { BLUE, RED, State, randomThrow, throwOfValue } from "../../static/js/rules/tab.js";
import { seeded } from "../../static/js/seeded.js";

const HARDEST = LEVELS.at(-1).level;

const TOKENS = {
  ".": null,
  b: { color: BLUE, inMotion: false, reachedLastRow: false },
  B: { color: BLUE, inMotion: true, reachedLastRow: false },
  "B*": { color: BLUE, inMotion: true, reachedLastRow: true },
  r: { color: RED, inMotion: false, reachedLastRow: false },
  R: { color: RED, inMotion: true, reachedLastRow: false },
  "R*": { color: RED, inMotion: true, reachedLastRow: true },
};

/** Return the state drawn in `diagram`, `turn` to play, with a throw of `value`. */
function position(diagram, turn, value) {
  const lines = diagram
    .trim()
    .split("\n")
    .map((line) => line.trim().split(/\s+/));
  const size = lines[0].length;
  const pieces = new Array(4 * size).fill(null);
  lines.reverse().forEach((tokens, row) => {
    tokens.forEach((token, column) => {
      // The snake: rows 0 and 2 run left to right, rows 1 and 3 right to left.
      const cell = row * size + (row % 2 === 0 ? column : size - 1 - column);
      pieces[cell] = TOKENS[token] === null ? null : { ...TOKENS[token] };
    });
  });
  const state = State.fromJSON({ size, pieces, turn, dice: null, step: "from", cell: null, selected: null, winner: null });
  state.throw(throwOfValue(value));
  return state;
}


/** Yield the positions of a random game where the player on turn has a choice to make. */
function* playout(size, seed, maxMoves = 400) {
  const random = seeded(seed);
  const state = State.initial(size);
  for (let moves = 0; state.winner === null && moves < maxMoves; ) {
    if (state.canThrow) state.throw(randomThrow(random));
    else if (state.mustPass) state.passTurn();
    else {
      yield state;
      const legal = state.legalMoves();
      state.apply(legal[Math.floor(random() * legal.length)]);
      moves++;
    }
  }
}

const key = (move) => `${move.origin}→${move.destination}`;

test("LEVELS lists levels 1 to the hardest in order, with names", () => {
  assert.deepEqual(
    LEVELS.map((entry) => entry.level),
    LEVELS.map((_, index) => index + 1),
  );
  assert.ok(HARDEST >= 3);
  for (const entry of LEVELS) {
    // A name a person reads in a narrow menu, and in a sentence what the level does.
    assert.match(entry.name, /^[A-Z][a-z]{2,11}$/);
    assert.equal(typeof entry.how, "string");
  }
});

test("every level returns one of the legal moves on positions from random playouts", () => {
  for (const [size, seed] of [
    [7, 1],
    [9, 2],
    [15, 3],
  ]) {
    let index = 0;
    for (const state of playout(size, seed)) {
      if (index++ % 7 !== 0) continue; // every level on every position would take minutes
      const legal = state.legalMoves().map(key);
      const before = JSON.stringify(state.toJSON());
      for (const { level } of LEVELS) {
        const move = chooseMove(state, level, seeded(index), { budget: 40 });
        assert.ok(legal.includes(key(move)), `level ${level} played ${key(move)} on size ${size}`);
        assert.equal(JSON.stringify(state.toJSON()), before, `level ${level} changed the state`);
      }
    }
  }
});

test("the choice is deterministic given the random generator", () => {
  const states = [];
  let index = 0;
  for (const state of playout(9, 4, 60)) if (index++ % 5 === 0) states.push(state.clone());
  // The hardest level stops on a clock; without one (as long as it finishes in time) it is deterministic too.
  for (const { level } of LEVELS) {
    const options = level === HARDEST ? { budget: Infinity, maxDepth: 3 } : {};
    const first = states.map((state) => key(chooseMove(state, level, seeded(level), options)));
    const second = states.map((state) => key(chooseMove(state, level, seeded(level), options)));
    assert.deepEqual(first, second);
  }
});

test("chooseMove refuses unknown levels and states without a move", () => {
  const state = position(
    `
    r r r r r r r
    . . . . . . .
    . . . . . . .
    b b b b b b b
    `,
    BLUE,
    1,
  );
  assert.throws(() => chooseMove(state, 0), RangeError);
  assert.throws(() => chooseMove(state, HARDEST + 1), RangeError);
  const stuck = position(
    `
    r . . . . . .
    . . . . . . .
    . . . . . . .
    b . . . . . .
    `,
    BLUE,
    2,
  );
  assert.throws(() => chooseMove(stuck, 1), /legal move/);
});

test("greedy captures when it can", () => {
  const cases = [
    // Blue, 2: the piece on 8 takes Red's on 10; 7 → 9 would be a quiet move.
    [
      `
      . . . . . . r
      . . . . . . .
      . . . R . B B
      . . . . . . .
      `,
      BLUE,
      2,
      "8→10",
    ],
    // Red, 3: of its two pieces in the middle, the one on 14 lands on Blue's on 17.
    [
      `
      r r r . . . .
      R . R B . . .
      . . . . . . .
      b b b . . . .
      `,
      RED,
      3,
      "14→17",
    ],
    // Blue, 1: into Red's home row onto an unmoved piece, instead of a tâb at home.
    [
      `
      r r r r r r r
      . . . . . . B
      . . . . . . .
      b b b b . . .
      `,
      BLUE,
      1,
      "20→21",
    ],
  ];
  for (const [diagram, turn, value, expected] of cases) {
    const state = position(diagram, turn, value);
    assert.ok(state.legalMoves().some((move) => move.captures && key(move) === expected), expected);
    for (let seed = 0; seed < 5; seed++) assert.equal(key(chooseMove(state, 2, seeded(seed))), expected);
  }
});

test("every level but the random one takes the capture that wins the game", () => {
  const state = position(
    `
    . . . . . . .
    . . . . . . .
    . . . R . B B
    B . . . . . .
    `,
    BLUE,
    2,
  );
  // Red's last piece is on 10; 7 → 9 and 0 → 2 are the quiet alternatives.
  const winning = state.legalMoves().find((move) => move.captures);
  assert.ok(winning);
  for (const { level } of LEVELS.slice(1)) {
    for (let seed = 0; seed < 3; seed++) assert.equal(key(chooseMove(state, level, seeded(seed))), key(winning));
  }
});

test("the hardest level moves a piece out of likely reach", () => {
  // Blue, 2: Red's piece on 7 takes Blue's on 9 with an itneyn (6/16); from 11 it would need an arba'ah (1/16).
  // Moving the piece on 2 instead leaves the one on 9 in danger.
  const state = position(
    `
    . . . . . r r
    . . . . . . .
    . . . . B . R
    . . B . . . .
    `,
    BLUE,
    2,
  );
  assert.deepEqual(state.legalMoves().map(key), ["2→4", "9→11"]);
  for (let seed = 0; seed < 3; seed++) assert.equal(key(chooseMove(state, HARDEST, seeded(seed))), "9→11");
});

test("the hardest level's search stops when its budget runs out, with a legal move in hand", () => {
  // How long it takes on crowded boards is a figure of `make bench-ai`, not a test's: here the clock is out of play.
  const crowded = [];
  for (let seed = 10; crowded.length < 4; seed++) {
    for (const state of playout(15, seed)) {
      const pieces = state.pieces.filter((piece) => piece !== null);
      const moving = pieces.filter((piece) => piece.inMotion).length;
      if (pieces.length >= 24 && moving >= 16 && state.legalMoves().length >= 5) {
        crowded.push(state.clone());
        break;
      }
    }
  }
  const legal = (state) => new Set(state.legalMoves().map(key));
  for (const state of crowded) {
    // A budget already spent: the search stops at its first look at the clock (every 64 nodes), within the first
    // iteration or right after it, instead of going the level's 12 moves deep.
    const spent = {};
    assert.ok(legal(state).has(key(chooseMove(state, HARDEST, seeded(7), { budget: -1, stats: spent }))));
    assert.ok(spent.depth <= 1, `depth ${spent.depth}`);
    // No clock at all: the search goes exactly as deep as it is allowed to.
    const unbounded = {};
    assert.ok(legal(state).has(key(chooseMove(state, HARDEST, seeded(7), { budget: Infinity, maxDepth: 2, stats: unbounded }))));
    assert.equal(unbounded.depth, 2);
  }
});
