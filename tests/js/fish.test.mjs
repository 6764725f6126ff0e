// The JavaScript Fish engine (static/js/rules/fish.js) against games/rules/fish.py, the reference.
// The vectors (tests/vectors/fish.json.gz, written by `python manage.py rules_vectors fish`) hold what the Python module
// does in thousands of positions of random games of 2 to 4 players: the legal actions of the seat on turn, every seat's
// moves, the moves from one tile, refused actions with their messages, and the state after an action or a removal.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { gunzipSync } from "node:zlib";

import {
  BadTile,
  COLOURS,
  IllegalAction,
  IllegalMove,
  MOVEMENT,
  OVER,
  PLACEMENT,
  State,
  line,
  neighbour,
} from "../../static/js/rules/fish.js";

const VECTORS = JSON.parse(gunzipSync(readFileSync(new URL("../vectors/fish.json.gz", import.meta.url))));
const compact = (move) => [...move.start, ...move.end];
const ERRORS = { BadTile, IllegalMove };

// The board of the protocol page's example session.
const EXAMPLE_BOARD = [
  [3, 2, 4, 1],
  [1, 5, 1, 3],
  [5, 1, 5, 0],
  [1, 1, 4, 4],
  [1, 2, 1, 0],
  [4, 1, 5, 1],
  [2, 5, 1, 5],
  [5, 4, 1, 2],
  [1, 5, 2, 0],
  [0, 2, 5, 1],
];

test("the vectors are many and varied", () => {
  const positions = VECTORS.positions;
  assert.ok(positions.length >= 2500);
  for (const players of [2, 3, 4]) assert.ok(positions.filter((v) => v.state.players.length === players).length >= 500);
  assert.ok(positions.filter((v) => v.action.kind === "remove").length >= 50);
  assert.ok(positions.filter((v) => v.after.phase === OVER).length >= 100);
});

test("every position: the JSON, the legal actions, every seat's moves, the moves from a tile", () => {
  for (const vector of VECTORS.positions) {
    const state = State.fromJSON(vector.state);
    const where = JSON.stringify(vector.state);
    assert.deepEqual(state.toJSON(), vector.state);
    const seat = state.turn;
    const legal =
      state.phase === PLACEMENT ? state.legalPlacements(seat) : state.legalMoves(seat).map(compact);
    assert.deepEqual(legal, vector.legal, where);
    assert.deepEqual(
      vector.moves,
      state.penguins.map((_, each) => state.movesOf(each).map(compact)),
      where,
    );
    for (let other = 0; other < state.players; other++) {
      if (other !== seat) assert.deepEqual([state.legalPlacements(other), state.legalMoves(other)], [[], []]);
    }
    const [row, col] = vector.from.tile;
    if ("error" in vector.from) {
      assert.throws(
        () => state.movesFrom(row, col),
        (error) => error instanceof ERRORS[vector.from.error] && error.message === vector.from.message,
        where,
      );
    } else {
      assert.deepEqual(state.movesFrom(row, col).map(compact), vector.from.moves, where);
    }
  }
});

test("every refusal: the same error and message, and nothing changed", () => {
  for (const vector of VECTORS.positions) {
    const state = State.fromJSON(vector.state);
    for (const refusal of vector.refused) {
      assert.throws(
        () => state.apply(refusal.seat, refusal.action),
        (error) =>
          error instanceof ERRORS[refusal.error] &&
          error.name === refusal.error &&
          error.message === refusal.message,
        `${JSON.stringify(vector.state)} ${JSON.stringify(refusal)}`,
      );
      assert.deepEqual(state.toJSON(), vector.state);
    }
  }
});

test("every action and removal: the state after it, whose turn, and the ranks", () => {
  for (const vector of VECTORS.positions) {
    const state = State.fromJSON(vector.state);
    state.apply(vector.seat, vector.action);
    assert.deepEqual(state.toJSON(), vector.after, JSON.stringify(vector));
    assert.deepEqual(state.ranks(), vector.ranks);
  }
});

test("the page's coordinates and lines", () => {
  assert.deepEqual(neighbour(0, 0, "southeast"), [1, 0]);
  assert.deepEqual(neighbour(0, 0, "south"), [2, 0]);
  assert.deepEqual(
    ["northwest", "northeast", "southwest", "southeast"].map((direction) => neighbour(1, 0, direction)),
    [[0, 0], [0, 1], [2, 0], [2, 1]],
  );
  assert.deepEqual(line(0, 1, "southeast").slice(0, 4), [[1, 1], [2, 2], [3, 2], [4, 3]]);
  assert.deepEqual(line(9, 2, "north"), [[7, 2], [5, 2], [3, 2], [1, 2]]);
});

test("the example session of the protocol's page", () => {
  const state = State.start(EXAMPLE_BOARD, 2);
  assert.equal(state.isLegalPlacement(0, 2, 3), false);
  [[0, 1], [4, 2], [2, 1], [7, 3], [9, 1], [5, 0], [3, 3], [8, 2]].forEach(([row, col], index) => {
    state.place(index % 2, row, col);
  });
  assert.deepEqual([state.phase, state.turn], [MOVEMENT, 0]);
  assert.deepEqual(state.movesFrom(0, 1).map((move) => move.end), [[1, 1], [2, 2], [3, 2], [1, 0], [2, 0]]);
  assert.equal(state.move(0, [0, 1], [2, 2]), 2);
  assert.equal(state.isLegalMove(1, [4, 2], [0, 2]), false);
  assert.throws(
    () => state.move(1, [4, 2], [0, 2]),
    (error) => error instanceof IllegalMove && error.message === "the way from (4, 2) to (0, 2) crosses a penguin at (2, 2)",
  );
  state.move(1, [7, 3], [5, 3]);
  assert.deepEqual(state.scores, [2, 2]);
  assert.deepEqual(state.toJSON().players[1].places, [
    { row: 4, col: 2 },
    { row: 5, col: 3 },
    { row: 5, col: 0 },
    { row: 8, col: 2 },
  ]);
  // Removals: white on turn goes, red moves alone to the end and wins.
  state.remove(1);
  assert.deepEqual([state.turn, state.penguins[1], state.toJSON().removed], [0, [], ["white"]]);
  assert.throws(() => state.remove(1), (error) => error instanceof IllegalMove);
  while (state.turn !== null) state.move(0, ...Object.values(state.legalMoves(0)[0]));
  assert.deepEqual([state.phase, state.winners(), state.outcome().ranks], [OVER, [0], [1, 2]]);
  assert.throws(
    () => state.place(0, 0, 0),
    (error) => error instanceof IllegalAction && error.message === "the game is over",
  );
  assert.deepEqual(COLOURS.slice(0, state.players), ["red", "white"]);
});
