// The JavaScript rules engine (static/js/rules/tab.js) against games/rules/tab.py, the reference.
// The vectors (tests/vectors/tab.json.gz, written by `python manage.py rules_vectors tab`) hold what the Python module
// does in thousands of positions and click flows; the tests below replay them all, then check the interface itself.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { gunzipSync } from "node:zlib";

import {
  BLUE,
  DEFAULT_SIZE,
  cellName,
  IllegalMove,
  MAX_SIZE,
  MIN_SIZE,
  RED,
  State,
  THROW_NAMES,
  THROW_PROBABILITIES,
  THROW_VALUES,
  cellOf,
  opponent,
  ownPathPosition,
  pieceOf,
  randomThrow,
  throwFromSticks,
  throwOfValue,
} from "../../static/js/rules/tab.js";
import { seeded } from "../../static/js/seeded.js";

const VECTORS = JSON.parse(gunzipSync(readFileSync(new URL("../vectors/tab.json.gz", import.meta.url))));
const SIZES = [7, 9, 11, 13, 15];

// The vectors' compact notation (games/rules/tab_vectors.py): `board turn winner dice step cell selected`.
const PIECES_BY_CODE = new Map(Object.entries(VECTORS.pieces));
/** Return a key for a piece as JSON shows it (null for an empty cell). */
const pieceKey = (piece) => piece && `${piece.color} ${piece.inMotion} ${piece.reachedLastRow}`;
const CODES_BY_PIECE = new Map([...PIECES_BY_CODE].map(([code, piece]) => [pieceKey(piece), code]));
const COLORS_BY_CODE = new Map([
  ["B", BLUE],
  ["R", RED],
  ["-", null],
]);
const CODES_BY_COLOR = new Map([...COLORS_BY_CODE].map(([code, color]) => [color, code]));

/** Return the dice (the API's JSON) of the hexadecimal digit whose bit i is stick i, computed without the engine. */
function diceOf(digit) {
  const bits = Number.parseInt(digit, 16);
  const stickValues = [0, 1, 2, 3].map((stick) => (bits & (1 << stick)) > 0);
  const value = stickValues.filter(Boolean).length || 6;
  return { stickValues, value, keepPlaying: [1, 4, 6].includes(value) };
}

/** Return the JSON (Python's `State.to_json()` format) of the state written as `code`. */
function jsonOf(code) {
  const [board, turn, winner, dice, step, cell, selected] = code.split(" ");
  return {
    size: board.length / 4,
    pieces: [...board].map((symbol) => PIECES_BY_CODE.get(symbol)),
    turn: COLORS_BY_CODE.get(turn),
    dice: dice === "-" ? null : diceOf(dice),
    step,
    cell: cell === "-" ? null : Number(cell),
    selected: selected === "-" ? null : selected.split(",").map(Number),
    winner: COLORS_BY_CODE.get(winner),
  };
}

/** Return the state written as `code`. */
function decode(code) {
  return State.fromJSON(jsonOf(code));
}

/** Return `state` in the vectors' notation, read from its JSON so that `toJSON` is checked at every step. */
function encode(state) {
  const json = state.toJSON();
  const sticks = json.dice?.stickValues.reduce((bits, light, stick) => bits | (light ? 1 << stick : 0), 0);
  return [
    json.pieces.map((piece) => CODES_BY_PIECE.get(pieceKey(piece)) ?? "?").join(""),
    CODES_BY_COLOR.get(json.turn),
    CODES_BY_COLOR.get(json.winner),
    json.dice === null ? "-" : sticks.toString(16),
    json.step,
    json.cell === null ? "-" : String(json.cell),
    json.selected === null ? "-" : json.selected.join(","),
  ].join(" ");
}

/** Do a flow's `action` on `state` and return its outcome as the vectors write it: a move, null or a refusal. */
function perform(state, [kind, ...args]) {
  try {
    if (kind === "throw") state.throw(diceOf(args[0]));
    else if (kind === "pass") state.passTurn();
    else if (kind === "apply") state.apply({ origin: args[0], destination: args[1], captures: args[2] });
    else if (kind === "select") {
      const move = state.select(args[0]);
      return move === null ? null : [move.origin, move.destination, move.captures];
    } else throw new Error(`unknown action ${kind}`);
    return null;
  } catch (error) {
    if (error instanceof IllegalMove) return error.message;
    throw error;
  }
}

/** Return the size of the board written as `code`. */
const sizeOf = (code) => code.indexOf(" ") / 4;

/** Return the cells `first` … `last`, in that order. */
const cells = (first, last) => Array.from({ length: last - first + 1 }, (_, index) => first + index);

// The vectors

test("the vectors cover at least 10,000 distinct positions on every size", () => {
  assert.equal(VECTORS.version, 1);
  assert.deepEqual(VECTORS.values, THROW_VALUES);
  const positions = VECTORS.positions.map(([code]) => code.split(" ").slice(0, 2).join(" "));
  assert.ok(new Set(positions).size >= 10_000, `${new Set(positions).size} distinct positions`);
  assert.deepEqual([...new Set(VECTORS.positions.map(([code]) => sizeOf(code)))].sort((a, b) => a - b), SIZES);
  for (const [code] of VECTORS.positions) assert.equal(encode(decode(code)), code);
});

for (const size of SIZES) {
  test(`every throw in every position of size ${size}: moves in Python's order, states after, pass and throw`, () => {
    let checked = 0;
    for (const [code, results] of VECTORS.positions) {
      if (sizeOf(code) !== size) continue;
      const state = decode(code);
      VECTORS.values.forEach((value, index) => {
        const thrown = state.clone();
        thrown.throw(throwOfValue(value));
        const [mustPass, canThrow, moves] = results[index];
        const actual = thrown.legalMoves().map((move) => {
          const after = thrown.clone();
          after.apply(move);
          return [move.origin, move.destination, move.captures, encode(after)];
        });
        const where = `position "${code}", throw ${value}`;
        assert.deepEqual(actual, moves, where);
        assert.deepEqual([thrown.mustPass, thrown.canThrow], [mustPass, canThrow], where);
        for (const origin of new Set(moves.map(([from]) => from))) {
          const destinations = moves.filter(([from]) => from === origin).map(([, to]) => to);
          assert.deepEqual(thrown.destinations(origin, value), destinations, `${where}, cell ${origin}`);
        }
        checked++;
      });
      assert.equal(encode(state), code, "the copies left the position alone");
    }
    assert.ok(checked > 0);
  });
}

test("destinations work for either color's pieces, whoever is on turn", () => {
  // Python's destinations() reads the piece's color, not the turn: the opponent's answers match its legal moves.
  for (const [code] of VECTORS.positions.filter((_, index) => index % 10 === 0)) {
    const state = decode(code);
    const rival = state.clone();
    rival.turn = opponent(state.turn);
    for (const value of THROW_VALUES) {
      rival.dice = throwOfValue(value);
      const moves = rival.legalMoves();
      state.pieces.forEach((piece, cell) => {
        if (piece?.color !== rival.turn) return;
        const expected = moves.filter((move) => move.origin === cell).map((move) => move.destination);
        assert.deepEqual(state.destinations(cell, value), expected, `position "${code}", cell ${cell}, ${value}`);
      });
    }
  }
});

test("every flow of throws, passes, clicks and moves, with the exact refusals", () => {
  for (const [start, steps] of VECTORS.flows) {
    const state = decode(start);
    steps.forEach(([action, outcome, after], index) => {
      const where = `flow from "${start}", action ${index} ${JSON.stringify(action)}`;
      assert.deepEqual([perform(state, action), encode(state)], [outcome, after], where);
    });
  }
});

test("states round-trip through Python's JSON text", () => {
  assert.ok(VECTORS.json.length > 100);
  for (const [code, text] of VECTORS.json) {
    const state = State.fromJSON(JSON.parse(text));
    assert.equal(JSON.stringify(state), text);
    assert.equal(encode(state), code);
  }
});

// The interface itself

/** Return a position of `size` with the given pieces (cell → piece), `turn` to play and, if given, a throw. */
function position(size, pieces, turn = BLUE, value = null) {
  const board = new Array(4 * size).fill(null);
  for (const [cell, piece] of Object.entries(pieces)) board[cell] = piece;
  const state = new State(size, board, turn);
  if (value !== null) state.throw(throwOfValue(value));
  return state;
}

/** Assert that `action` throws IllegalMove(`message`) and leaves `state` exactly as it was. */
function assertRefused(state, action, message) {
  const before = JSON.stringify(state);
  assert.throws(action, (error) => error instanceof IllegalMove && error.message === message);
  assert.equal(JSON.stringify(state), before);
}


const unmoved = (color) => ({ color, inMotion: false, reachedLastRow: false });

test("the engine is a plain ES module without imports, for browsers and Node alike", () => {
  const source = readFileSync(new URL("../../static/js/rules/tab.js", import.meta.url), "utf8");
  assert.doesNotMatch(source, /^\s*import\b|\brequire\(|\bprocess\.|\bBuffer\b/m);
});

test("the constants", () => {
  assert.deepEqual([BLUE, RED, MIN_SIZE, MAX_SIZE, DEFAULT_SIZE], ["Blue", "Red", 7, 15, 9]);
  assert.deepEqual(THROW_NAMES, { 1: "Tâb", 2: "Itneyn", 3: "Teláteh", 4: "Arba'ah", 6: "Sitteh" });
  assert.deepEqual(THROW_PROBABILITIES, { 1: 4 / 16, 2: 6 / 16, 3: 4 / 16, 4: 1 / 16, 6: 1 / 16 });
  assert.equal(opponent(BLUE), RED);
  assert.equal(opponent(RED), BLUE);
});

test("the initial position, in Python's JSON", () => {
  assert.deepEqual(State.initial(7).toJSON(), {
    size: 7,
    pieces: [...new Array(7).fill(unmoved(BLUE)), ...new Array(14).fill(null), ...new Array(7).fill(unmoved(RED))],
    turn: "Blue",
    dice: null,
    step: "from",
    cell: null,
    selected: null,
    winner: null,
  });
  const state = State.initial();
  assert.equal(state.size, DEFAULT_SIZE);
  assert.equal(state.pieces.length, 36);
  assert.deepEqual([state.canThrow, state.mustPass, state.legalMoves(), state.outcome()], [true, false, [], null]);
  for (const size of SIZES) assert.equal(State.initial(size).pieces.length, 4 * size);
  for (const size of [5, 6, 8, 14, 16, 17, 0, -9, "9", 9.5, true, null]) {
    assert.throws(() => State.initial(size), RangeError, `size ${size}`);
  }
});

test("own path positions follow the spec's formula and are their own inverse", () => {
  assert.deepEqual(
    cells(0, 27).map((position) => cellOf(position, RED, 7)),
    [...cells(21, 27), ...cells(14, 20), ...cells(7, 13), ...cells(0, 6)],
  );
  assert.equal(ownPathPosition(25, RED, 9), 16);
  for (const size of SIZES) {
    for (const color of [BLUE, RED]) {
      for (let cell = 0; cell < 4 * size; cell++) {
        assert.equal(cellOf(ownPathPosition(cell, color, size), color, size), cell);
        if (color === BLUE) assert.equal(ownPathPosition(cell, color, size), cell);
      }
    }
  }
});

for (const [color, start, expected, end] of [
  [BLUE, 0, cells(0, 27), [27, 14]],
  // Red's home row is Blue's row 3, and its last row Blue's home.
  [RED, 21, [...cells(21, 27), ...cells(14, 20), ...cells(7, 13), ...cells(0, 6)], [6, 7]],
]) {
  test(`${color} walks its whole path one tâb at a time, the row-3 branch first at the fork`, () => {
    const state = position(7, { [start]: pieceOf(color, true) }, color, 1);
    const path = [start];
    while (path.length < 28) {
      const [next] = state.destinations(path.at(-1), 1);
      state.pieces[next] = state.pieces[path.at(-1)];
      state.pieces[path.at(-1)] = null;
      if (expected.indexOf(next) >= 21) state.pieces[next] = pieceOf(color, true, true);
      path.push(next);
    }
    assert.deepEqual(path, expected);
    assert.deepEqual(state.destinations(end[0], 1), [end[1]]);
  });
}

test("the fork offers row 3 then row 1, and a piece that has been in row 3 only row 1", () => {
  const state = position(9, { 25: pieceOf(BLUE, true), 28: pieceOf(RED), 0: pieceOf(BLUE) }, BLUE, 3);
  assert.deepEqual(state.destinations(25, 3), [28, 10]);
  assert.deepEqual(state.legalMoves(), [
    { origin: 25, destination: 28, captures: true },
    { origin: 25, destination: 10, captures: false },
  ]);
  state.pieces[25] = pieceOf(BLUE, true, true);
  assert.deepEqual(state.destinations(25, 3), [10]);
  assert.deepEqual(state.destinations(25, 5), []);
  assert.deepEqual(state.destinations(-1, 3), []);
  assert.deepEqual(state.destinations(36, 3), []);
  assert.deepEqual(state.destinations(1, 1), []);
});

test("throwFromSticks reads all 16 patterns of the sticks", () => {
  for (let bits = 0; bits < 16; bits++) {
    const stickValues = [0, 1, 2, 3].map((stick) => (bits & (1 << stick)) > 0);
    const light = stickValues.filter(Boolean).length;
    const value = [6, 1, 2, 3, 4][light];
    assert.deepEqual(throwFromSticks(stickValues), { stickValues, value, keepPlaying: value !== 2 && value !== 3 });
  }
  for (const sticks of [[true, false, true], [1, 0, 0, 0], "1000", null, [true, false, true, false, true]]) {
    assert.throws(() => throwFromSticks(sticks), RangeError);
  }
});

test("the probabilities are those of four fair sticks", () => {
  const counts = {};
  for (let bits = 0; bits < 16; bits++) {
    const { value } = throwFromSticks([0, 1, 2, 3].map((stick) => (bits & (1 << stick)) > 0));
    counts[value] = (counts[value] ?? 0) + 1 / 16;
  }
  assert.deepEqual(counts, THROW_PROBABILITIES);
});

test("throwOfValue lights the first sticks, as Python's Throw.of_value does", () => {
  assert.deepEqual(
    THROW_VALUES.map((value) => throwOfValue(value).stickValues),
    [
      [true, false, false, false],
      [true, true, false, false],
      [true, true, true, false],
      [true, true, true, true],
      [false, false, false, false],
    ],
  );
  for (const value of THROW_VALUES) assert.equal(throwOfValue(value).value, value);
  for (const value of [0, 5, 7, -1, "1", null]) assert.throws(() => throwOfValue(value), RangeError);
});

test("randomThrow throws four fair sticks with the given randomness", () => {
  const sequence = [0.1, 0.9, 0.3, 0.7];
  assert.deepEqual(randomThrow(() => sequence.shift()).stickValues, [true, false, true, false]);
  const random = seeded(20240611);
  const counts = { 1: 0, 2: 0, 3: 0, 4: 0, 6: 0 };
  for (let index = 0; index < 16000; index++) counts[randomThrow(random).value]++;
  for (const value of THROW_VALUES) assert.ok(Math.abs(counts[value] / 16000 - THROW_PROBABILITIES[value]) < 0.015);
  assert.ok(THROW_VALUES.includes(randomThrow().value));
});

test("the JSON round trip at the fork, in Python's format", () => {
  const state = position(7, { 20: pieceOf(BLUE, true), 21: pieceOf(RED) }, BLUE, 1);
  assert.equal(state.select(20), null);
  const json = JSON.parse(JSON.stringify(state));
  assert.deepEqual([json.step, json.cell, json.selected], ["to", 20, [21, 7]]);
  assert.deepEqual(json.dice, { stickValues: [true, false, false, false], value: 1, keepPlaying: true });
  assert.deepEqual(json.pieces[20], { color: "Blue", inMotion: true, reachedLastRow: false });
  const twin = State.fromJSON(json);
  assert.deepEqual(twin, state);
  assert.deepEqual(twin.select(7), { origin: 20, destination: 7, captures: false });
  assert.deepEqual([state.step, twin.step], ["to", "from"], "the copy is independent");
});

test("fromJSON refuses what Python's from_json refuses", () => {
  const valid = State.initial(7).toJSON();
  const broken = [
    { ...valid, size: 8 },
    { ...valid, pieces: [...valid.pieces, null] },
    { ...valid, pieces: [{ color: "Green", inMotion: false, reachedLastRow: false }, ...valid.pieces.slice(1)] },
    { ...valid, turn: "blue" },
    { ...valid, winner: "Green" },
    { ...valid, step: "over" },
    { ...valid, dice: { stickValues: [true, false, true] } },
  ];
  for (const json of broken) assert.throws(() => State.fromJSON(json), RangeError, JSON.stringify(json));
});

test("clone is independent and cheap: the pieces are shared and frozen", () => {
  const state = position(7, { 20: pieceOf(BLUE, true), 21: pieceOf(RED) }, BLUE, 1);
  state.select(20);
  const twin = state.clone();
  assert.deepEqual(twin, state);
  assert.equal(twin.pieces[20], state.pieces[20]);
  assert.ok(Object.isFrozen(state.pieces[20]) && Object.isFrozen(state.dice));
  twin.select(7);
  assert.deepEqual([state.step, state.selected, state.pieces[20]], ["to", [21, 7], pieceOf(BLUE, true)]);
  assert.equal(state.pieces[7], null);
});

test("select refuses bad cells with Python's messages, checking the cell before the dice", () => {
  const state = position(7, { 6: pieceOf(BLUE), 27: pieceOf(RED) }, BLUE, 1);
  for (const [cell, message] of [
    [true, "cell is not an integer"],
    ["3", "cell is not an integer"],
    [2.5, "cell is not an integer"],
    [null, "cell is not an integer"],
    [undefined, "cell is not an integer"],
    [-1, "cell is negative"],
    [28, "cell is out of the board"],
    [10, "No piece on that cell"],
    [27, "That piece is not yours"],
  ]) {
    assertRefused(state, () => state.select(cell), message);
  }
  const fresh = State.initial(7);
  assertRefused(fresh, () => fresh.select(-1), "cell is negative");
  assertRefused(fresh, () => fresh.select(6), "You must roll the dice first");
  assertRefused(fresh, () => fresh.passTurn(), "You must roll the dice first");
});

test("apply refuses any move that is not legal now, captures included", () => {
  const state = position(7, { 20: pieceOf(BLUE, true), 0: pieceOf(RED) }, BLUE, 1);
  for (const move of [
    { origin: 20, destination: 22, captures: false },
    { origin: 20, destination: 21, captures: true },
    { origin: 20, destination: 21 },
    { origin: 27, destination: 26, captures: false },
    { origin: "20", destination: 21, captures: false },
    null,
  ]) {
    assertRefused(state, () => state.apply(move), "Invalid move");
  }
  state.apply({ origin: 20, destination: 21, captures: false });
  assert.deepEqual(state.pieces[21], pieceOf(BLUE, true, true));
  assert.deepEqual([state.cell, state.selected, state.dice, state.turn], [20, [20, 21], null, BLUE]);
  assertRefused(state, () => state.apply({ origin: 21, destination: 22, captures: false }), "Invalid move");
});

test("capturing the last piece wins: the game is over", () => {
  const state = position(7, { 7: pieceOf(BLUE, true), 9: pieceOf(RED, true) }, BLUE, 2);
  assert.deepEqual(state.select(7), { origin: 7, destination: 9, captures: true });
  assert.deepEqual([state.winner, state.outcome(), state.turn, state.dice], [BLUE, BLUE, BLUE, null]);
  assert.deepEqual([state.canThrow, state.mustPass, state.legalMoves()], [false, false, []]);
  assertRefused(state, () => state.throw(throwOfValue(1)), "The game is over");
  assertRefused(state, () => state.passTurn(), "The game is over");
  assertRefused(state, () => state.select(-1), "The game is over");
});

test("a cell is named by its row and column as rules/tab.py names it", () => {
  const named = [0, 6, 7, 13, 14, 27].map((cell) => cellName(cell, 7));
  assert.deepEqual(named, [
    "row 1, column 1",
    "row 1, column 7",
    "row 2, column 7",
    "row 2, column 1",
    "row 3, column 1",
    "row 4, column 1",
  ]);
});
