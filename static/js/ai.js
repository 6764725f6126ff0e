// The CPU player: a random mover, a greedy one, and expectiminimax over the sticks' real probabilities.
// Every move it considers comes from the rules engine (rules/tab.js); this module only weighs them.

import { BLUE, THROW_PROBABILITIES, opponent, ownPathPosition, throwOfValue } from "./rules/tab.js";
import { mulberry32 } from "./seeded.js";

// Three levels that truly differ (BENCHMARKS.md: each wins most games against the one below). Level 3 searches `depth`
// moves ahead: deeper searches, and searches deepened for as long as a time budget allows, won no more often than it
// did, so there is no level above it. The search still takes a budget and a depth (options of `chooseMove`).
export const LEVELS = Object.freeze([
  Object.freeze({ level: 1, name: "Beginner", how: "Plays any move at random." }),
  Object.freeze({ level: 2, name: "Casual", how: "Takes what it can now, without looking ahead." }),
  Object.freeze({ level: 3, name: "Strong", how: "Weighs every throw two moves ahead.", depth: 2 }),
]);

const probabilityOf = (value) =>
  Number(THROW_PROBABILITIES instanceof Map ? THROW_PROBABILITIES.get(value) : THROW_PROBABILITIES[value]);

// The most likely throws first, so that a chance node can often stop before the rare ones.
const THROWS = [2, 1, 3, 4, 6].map((value) => {
  const dice = throwOfValue(value);
  return { value, probability: probabilityOf(value), dice, keepPlaying: dice.keepPlaying };
});

// Values are 2·P(win) − 1 for the searching player: a won game is 1, a lost one −1.
const WIN = 1;
const LOSS = -1;

// Log-odds of winning: first fitted by logistic regression on positions from self-play games (size 9), then
// tuned by matches between variants (the regression, fooled by late-game positions, overrated the last row).
const WEIGHTS = {
  // A piece, by where it stands on its own path:
  homeUnmoved: 0.4, // in its home row, still waiting for a tâb
  homeMoved: 0.57,
  middle: 0.55, // rows 1 and 2, where both players circulate
  lastRow: 0.75, // the opponent's home row: only the opponent's home-row pieces can still take it there
  lastRowFrozen: 0.71, // … but stuck there while its own home row is not empty
  // Captures in sight:
  threatOnTurn: 0.55, // probability that the player about to throw can capture
  targetsOnTurn: 0.04, // expected number of its possible targets
  threatOffTurn: 0.29, // the same for the other player, who throws after
  targetsOffTurn: 0.15,
  turn: 0.05,
};

/**
 * Return the move the CPU plays at `level` in `state` (dice thrown, some legal move), one of `state.legalMoves()`.
 * `random` only breaks ties, so the choice is the same for the same `random`, except when a `budget`'s clock
 * decides how deep the search looks. `options` (for benchmarks and tests): `budget` in ms and `maxDepth` override the
 * level's, and a `stats` object receives the depth reached and the number of nodes.
 */
export function chooseMove(state, level, random = Math.random, options = {}) {
  const moves = state.legalMoves();
  if (moves.length === 0) throw new Error("chooseMove needs a state with a legal move");
  const settings = LEVELS.find((entry) => entry.level === level);
  if (settings === undefined) throw new RangeError(`no CPU level ${level}`);
  if (options.stats) Object.assign(options.stats, { depth: 0, nodes: 0 });
  if (moves.length === 1) return moves[0];
  if (level === 1) return moves[Math.floor(random() * moves.length)];
  if (level === 2) return greedyMove(state, moves, random);
  const search = new Search(state, {
    maxDepth: options.maxDepth ?? settings.depth,
    budget: options.budget ?? settings.budget ?? Infinity,
  });
  const move = search.bestMove(moves, random);
  if (options.stats) Object.assign(options.stats, { depth: search.depth, nodes: search.nodes });
  return move;
}

/** Return the legal moves `color` would have with a throw of `throwOf.value`, whoever is on turn. */
function movesWith(state, color, throwOf) {
  const { turn, dice } = state;
  state.turn = color;
  state.dice = throwOf.dice;
  try {
    return state.legalMoves();
  } finally {
    state.turn = turn;
    state.dice = dice;
  }
}

/** Return, by cell, the probability that `color` can land there with its next throw. */
function reach(state, color) {
  const reachable = new Float64Array(state.pieces.length);
  for (const throwOf of THROWS) {
    const seen = new Set();
    for (const move of movesWith(state, color, throwOf)) {
      if (!seen.has(move.destination)) {
        seen.add(move.destination);
        reachable[move.destination] += throwOf.probability;
      }
    }
  }
  return reachable;
}

function ownRow(cell, color, size) {
  return Math.floor(ownPathPosition(cell, color, size) / size);
}

/**
 * Return the greedy choice: a capture first, then safety (where the opponent's next throw can land, weighted by
 * its probability), then small nudges: starting new pieces, leaving the home row, entering the last row usefully.
 */
function greedyMove(state, moves, random) {
  const { turn: color, size } = state;
  const rival = opponent(color);
  const dangerBefore = reach(state, rival);
  const rivalsAtHome = countInRow(state, rival, 0);
  let best = [];
  let bestScore = -Infinity;
  for (const move of moves) {
    const after = state.clone();
    after.apply(move);
    if (after.winner !== null) return move;
    const dangerAfter = reach(after, rival);
    let score = move.captures ? 1000 : 0;
    score -= 400 * dangerAfter[move.destination];
    score += 300 * dangerBefore[move.origin];
    for (let cell = 0; cell < after.pieces.length; cell++) {
      if (cell !== move.destination && after.pieces[cell]?.color === color) {
        score -= 100 * (dangerAfter[cell] - dangerBefore[cell]); // the pieces the move exposes or shields
      }
    }
    const from = ownRow(move.origin, color, size);
    const to = ownRow(move.destination, color, size);
    if (!state.pieces[move.origin].inMotion) score += 20;
    if (from === 0 && to > 0) score += 10; // the last row's pieces wait until the home row is empty
    if (to === 3 && from !== 3) score += rivalsAtHome > 0 ? 30 : -10; // pieces to take there, or a dead end
    if (score > bestScore + 1e-9) {
      bestScore = score;
      best = [move];
    } else if (score > bestScore - 1e-9) {
      best.push(move);
    }
  }
  return best[Math.floor(random() * best.length)];
}

function countInRow(state, color, row) {
  const { size, pieces } = state;
  let count = 0;
  for (let cell = 0; cell < pieces.length; cell++) {
    if (pieces[cell]?.color === color && ownRow(cell, color, size) === row) count++;
  }
  return count;
}

// Zobrist keys: two 32-bit words per (cell, kind of piece), kind = color × inMotion × reachedLastRow.
const ZOBRIST = (() => {
  const next = mulberry32(0x2545f491);
  const cells = 4 * 15;
  const words = new Int32Array(cells * 9 * 2 + 2 + 2 * 7);
  for (let index = 0; index < words.length; index++) words[index] = next();
  return words;
})();
const TURN_WORD = 4 * 15 * 9 * 2;
const DICE_WORD = TURN_WORD + 2;

function kindOf(piece) {
  if (piece === null) return 0;
  return 1 + (piece.color === BLUE ? 0 : 4) + (piece.inMotion ? 2 : 0) + (piece.reachedLastRow ? 1 : 0);
}

function pieceWord(cell, piece, word) {
  return piece === null ? 0 : ZOBRIST[(cell * 9 + kindOf(piece)) * 2 + word];
}

class Timeout extends Error {}

/** Expectiminimax with alpha-beta at the players' nodes and Star1 bounds at the chance nodes. */
class Search {
  constructor(state, { maxDepth, budget }) {
    this.root = state;
    this.color = state.turn;
    this.rival = opponent(state.turn);
    this.maxDepth = maxDepth;
    this.started = performance.now();
    this.deadline = this.started + budget;
    this.nodes = 0;
    this.table = new Map(); // chance nodes: key → {depth, lower, upper}
    this.bestReplies = new Map(); // players' nodes: key → index of the best move last time
  }

  bestMove(moves, random) {
    const hash = Search.hashOf(this.root);
    let ranked = moves.map((move) => ({ move, value: move.captures ? 1 : 0 }));
    ranked.sort((a, b) => b.value - a.value);
    let chosen = ranked.filter((entry) => entry.value === ranked[0].value);
    let previousNodes = 0;
    this.depth = 0;
    for (let depth = 1; depth <= this.maxDepth; depth++) {
      const nodesBefore = this.nodes;
      const started = performance.now();
      let result;
      try {
        result = this.rootIteration(ranked, hash, depth);
      } catch (error) {
        if (error instanceof Timeout) break;
        throw error;
      }
      ranked = result.ranked;
      chosen = result.ties;
      this.depth = depth;
      if (Math.abs(ranked[0].value) >= WIN) break; // forced either way: more depth changes nothing
      // Each iteration costs about the previous one times a steady factor: skip one that could not finish.
      const spent = this.nodes - nodesBefore;
      const growth = previousNodes > 0 ? Math.max(3, spent / previousNodes) : 10;
      previousNodes = spent;
      const now = performance.now();
      if (now + (now - started) * growth > this.deadline) break;
    }
    return chosen[Math.floor(random() * chosen.length)].move;
  }

  rootIteration(ranked, hash, depth) {
    const results = [];
    let best = -Infinity;
    const TIE = 1e-9;
    for (const { move } of ranked) {
      const value = this.afterMove(this.root, null, move, ...hash, depth - 1, best - TIE, Infinity);
      results.push({ move, value });
      if (value > best) best = value;
    }
    results.sort((a, b) => b.value - a.value);
    return { ranked: results, ties: results.filter((entry) => entry.value >= best - TIE) };
  }

  tick() {
    this.nodes++;
    if ((this.nodes & 63) === 0 && performance.now() > this.deadline) throw new Timeout();
  }

  /** Return the two words of the Zobrist hash of `state` (pieces and turn). */
  static hashOf(state) {
    let high = state.turn === BLUE ? 0 : ZOBRIST[TURN_WORD];
    let low = state.turn === BLUE ? 0 : ZOBRIST[TURN_WORD + 1];
    state.pieces.forEach((piece, cell) => {
      high ^= pieceWord(cell, piece, 0);
      low ^= pieceWord(cell, piece, 1);
    });
    return [high, low];
  }

  static key(high, low) {
    return (high >>> 0) * 0x200000 + (low >>> 11);
  }

  /** Return the value of `move` in `state` for the searching player, with `throwOf` thrown first if given. */
  afterMove(state, throwOf, move, high, low, depth, alpha, beta) {
    this.tick();
    const after = state.clone();
    if (throwOf !== null) after.throw(throwOf.dice);
    after.apply(move);
    if (after.winner !== null) return after.winner === this.color ? WIN : LOSS;
    // Only the move's two cells and maybe the turn changed.
    const { origin, destination } = move;
    const { pieces } = state;
    high ^= pieceWord(origin, pieces[origin], 0) ^ pieceWord(destination, pieces[destination], 0);
    low ^= pieceWord(origin, pieces[origin], 1) ^ pieceWord(destination, pieces[destination], 1);
    high ^= pieceWord(destination, after.pieces[destination], 0);
    low ^= pieceWord(destination, after.pieces[destination], 1);
    if (after.turn !== state.turn) {
      high ^= ZOBRIST[TURN_WORD];
      low ^= ZOBRIST[TURN_WORD + 1];
    }
    return this.chance(after, high, low, depth, alpha, beta);
  }

  /** Return the value of `state`, whose player on turn is about to throw. */
  chance(state, high, low, depth, alpha, beta) {
    const key = Search.key(high, low);
    const entry = this.table.get(key);
    if (entry !== undefined && entry.depth >= depth) {
      if (entry.lower === entry.upper || entry.lower >= beta) return entry.lower;
      if (entry.upper <= alpha) return entry.upper;
      alpha = Math.max(alpha, entry.lower);
      beta = Math.min(beta, entry.upper);
    }
    if (depth === 0) {
      const value = this.evaluate(state);
      this.table.set(key, { depth, lower: value, upper: value });
      return value;
    }

    // Throws that leave no move and let the player throw again only renormalise the others.
    const outcomes = [];
    let repeat = 0;
    for (const throwOf of THROWS) {
      const moves = movesWith(state, state.turn, throwOf);
      if (moves.length > 0) outcomes.push({ throwOf, moves });
      else if (throwOf.keepPlaying) repeat += throwOf.probability;
      else outcomes.push({ throwOf, moves });
    }
    // Star1: stop as soon as the throws still to come cannot bring the average back inside (alpha, beta).
    alpha = Math.max(alpha, LOSS);
    beta = Math.min(beta, WIN);
    let sum = 0;
    let remaining = 1;
    for (const { throwOf, moves } of outcomes) {
      const probability = throwOf.probability / (1 - repeat);
      remaining -= probability;
      const childAlpha = Math.max(LOSS, (alpha - sum - remaining * WIN) / probability);
      const childBeta = Math.min(WIN, (beta - sum - remaining * LOSS) / probability);
      const value =
        moves.length === 0
          ? this.pass(state, throwOf, high, low, depth, childAlpha, childBeta)
          : this.decision(state, throwOf, moves, high, low, depth, childAlpha, childBeta);
      sum += probability * value;
      if (sum + remaining * WIN <= alpha) {
        this.store(key, depth, entry, LOSS, sum + remaining * WIN);
        return sum + remaining * WIN;
      }
      if (sum + remaining * LOSS >= beta) {
        this.store(key, depth, entry, sum + remaining * LOSS, WIN);
        return sum + remaining * LOSS;
      }
    }
    this.store(key, depth, entry, sum, sum);
    return sum;
  }

  store(key, depth, entry, lower, upper) {
    if (entry !== undefined && entry.depth === depth) {
      entry.lower = Math.max(entry.lower, lower);
      entry.upper = Math.min(entry.upper, upper);
    } else if (entry === undefined || entry.depth < depth) {
      this.table.set(key, { depth, lower, upper });
    }
  }

  pass(state, throwOf, high, low, depth, alpha, beta) {
    this.tick();
    const after = state.clone();
    after.throw(throwOf.dice);
    after.passTurn();
    return this.chance(after, high ^ ZOBRIST[TURN_WORD], low ^ ZOBRIST[TURN_WORD + 1], depth - 1, alpha, beta);
  }

  /** Return the value of `state` once the player on turn has thrown `throwOf` and has `moves`. */
  decision(state, throwOf, moves, high, low, depth, alpha, beta) {
    const maximizing = state.turn === this.color;
    const key = Search.key(high, low ^ ZOBRIST[DICE_WORD + throwOf.value]);
    const hint = this.bestReplies.get(key);
    const order = moves.map((_, index) => index);
    order.sort((a, b) => score(b) - score(a));
    function score(index) {
      return (index === hint ? 2 : 0) + (moves[index].captures ? 1 : 0);
    }
    let best = maximizing ? -Infinity : Infinity;
    let bestIndex = order[0];
    for (const index of order) {
      const value = this.afterMove(state, throwOf, moves[index], high, low, depth - 1, alpha, beta);
      if (maximizing ? value > best : value < best) {
        best = value;
        bestIndex = index;
      }
      if (maximizing) alpha = Math.max(alpha, value);
      else beta = Math.min(beta, value);
      if (alpha >= beta) break;
    }
    this.bestReplies.set(key, bestIndex);
    return best;
  }

  /** Return the value of `state` (nobody has thrown yet) for the searching player, in (LOSS, WIN). */
  evaluate(state) {
    const { size, pieces, turn } = state;
    let blueAtHome = false;
    let redAtHome = false;
    for (let cell = 0; cell < pieces.length; cell++) {
      const piece = pieces[cell];
      if (piece === null || ownRow(cell, piece.color, size) !== 0) continue;
      if (piece.color === BLUE) blueAtHome = true;
      else redAtHome = true;
    }
    let score = 0;
    for (let cell = 0; cell < pieces.length; cell++) {
      const piece = pieces[cell];
      if (piece === null) continue;
      const row = ownRow(cell, piece.color, size);
      let worth;
      if (row === 0) worth = piece.inMotion ? WEIGHTS.homeMoved : WEIGHTS.homeUnmoved;
      else if (row < 3) worth = WEIGHTS.middle;
      else worth = (piece.color === BLUE ? blueAtHome : redAtHome) ? WEIGHTS.lastRowFrozen : WEIGHTS.lastRow;
      score += piece.color === this.color ? worth : -worth;
    }
    for (const color of [this.color, this.rival]) {
      let threat = 0;
      let again = 0;
      let targets = 0;
      for (const throwOf of THROWS) {
        const moves = movesWith(state, color, throwOf);
        let captures = 0;
        for (const move of moves) if (move.captures) captures++;
        if (captures > 0) threat += throwOf.probability;
        else if (throwOf.keepPlaying) again += throwOf.probability;
        targets += throwOf.probability * captures;
      }
      // The player on turn gets another throw after a 1, 4 or 6 that captured nothing.
      const worth =
        color === turn
          ? WEIGHTS.threatOnTurn * (threat / (1 - again)) + WEIGHTS.targetsOnTurn * targets + WEIGHTS.turn
          : WEIGHTS.threatOffTurn * threat + WEIGHTS.targetsOffTurn * targets;
      score += color === this.color ? worth : -worth;
    }
    return Math.tanh(score / 2); // 2·P(win) − 1 for the logistic model the weights come from
  }
}
