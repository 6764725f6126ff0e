// The JavaScript Plakoto engine (static/js/rules/plakoto.js) against games/rules/plakoto.py, the reference.
// The vectors (tests/vectors/plakoto.json.gz, written by `python manage.py rules_vectors plakoto`) hold what the Python
// module does in thousands of positions of random games: the allowed moves and their dice, the state after a move,
// and the state after a roll (passes and draws included).

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { gunzipSync } from "node:zlib";

import { IllegalMove, State } from "../../static/js/rules/plakoto.js";

const VECTORS = JSON.parse(gunzipSync(readFileSync(new URL("../vectors/plakoto.json.gz", import.meta.url))));

test("the vectors are many", () => {
  assert.ok(VECTORS.moves.length >= 2500 && VECTORS.rolls.length >= 100);
});

test("every position: the allowed moves with their dice, and the state after one", () => {
  for (const vector of VECTORS.moves) {
    const state = State.fromJSON(vector.state);
    assert.deepEqual(state.toJSON(), vector.state);
    assert.deepEqual(state.planList(), vector.plan, JSON.stringify(vector.state));
    state.move(...vector.move);
    assert.deepEqual(state.toJSON(), vector.after);
  }
});

test("every roll: the dice to play, or a pass, or a draw", () => {
  for (const vector of VECTORS.rolls) {
    const state = State.fromJSON(vector.state);
    state.roll(vector.dice);
    assert.deepEqual(state.toJSON(), vector.after);
  }
});

test("refusals", () => {
  const state = State.start();
  assert.throws(() => state.move(24, 20), (error) => error instanceof IllegalMove && error.message === "Game is not in action.");
  state.roll([6, 5]);
  assert.throws(() => state.move(1, 7), (error) => error.message === "This piece cannot move.");
  assert.throws(() => state.move(24, 17), (error) => error.message === "This move is illegal.");
  assert.deepEqual(state.planList(), [[24, 18, 6], [24, 19, 5]]);
});
