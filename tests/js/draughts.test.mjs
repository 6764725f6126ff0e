// The JavaScript draughts engine (static/js/rules/draughts.js) against games/rules/draughts.py, the reference.
// The vectors (tests/vectors/draughts.json.gz, written by `python manage.py rules_vectors draughts`) hold what the Python
// module does in thousands of positions: every legal move in order, the board after it, the winner, refusals.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { gunzipSync } from "node:zlib";

import {
  IllegalMove,
  START,
  State,
  perft,
  squareIndex,
  squareName,
} from "../../static/js/rules/draughts.js";

const VECTORS = JSON.parse(gunzipSync(readFileSync(new URL("../vectors/draughts.json.gz", import.meta.url))));
const names = (squares) => squares.map(squareName).join(" ");
const indices = (text) => (text ? text.split(" ").map(squareIndex) : []);

test("the vectors are many", () => {
  assert.ok(VECTORS.positions.length >= 3000);
});

test("every position: the legal moves in Python's order, the board after each, the winner", () => {
  for (const vector of VECTORS.positions) {
    const state = new State(vector.board, vector.turn);
    const moves = state.legalMoves();
    assert.deepEqual(
      moves.map((move) => ({ path: names(move.path), captured: names(move.captured), crowned: move.crowned })),
      vector.moves.map(({ path, captured, crowned }) => ({ path, captured, crowned })),
      `${vector.board} ${vector.turn}`,
    );
    moves.forEach((move, index) => {
      const after = state.copy();
      after.apply(state.find(move.path));
      assert.equal(after.text, vector.moves[index].after);
      assert.equal(after.turn, state.turn === "w" ? "b" : "w");
    });
    assert.equal(state.winner(), vector.winner);
  }
});

test("every refusal, with Python's message", () => {
  for (const vector of VECTORS.positions) {
    const state = new State(vector.board, vector.turn);
    for (const refusal of vector.refusals) {
      assert.throws(
        () => state.find(indices(refusal.path)),
        (error) => error instanceof IllegalMove && error.message === refusal.message,
        `${vector.board} ${vector.turn}: ${refusal.path}`,
      );
    }
  }
});

test("perft from the start", () => {
  const counts = [7, 49, 302, 1469, 7361, 36768, 179740];
  counts.forEach((count, depth) => assert.equal(perft(new State(), depth + 1), count));
});

test("squares are named as the protocol names them", () => {
  assert.equal(squareName(0), "a8");
  assert.equal(squareName(63), "h1");
  assert.equal(START[squareIndex("a1")], "w");
  for (const bad of ["A3", "i1", "a9", "c", ""]) assert.throws(() => squareIndex(bad), IllegalMove);
});
