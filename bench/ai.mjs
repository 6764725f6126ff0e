// Strength of the CPU levels (static/js/ai.js): every pair of levels plays the same number of games, each
// level starting half of them, on as many threads as there are cores.
//
//   node bench/ai.mjs [--games N] [--size S] [--workers W]
//
//   --games N       games per pairing (default 1000)
//   --size S        columns of the board (default 9)
//   --workers W     threads (default: one per core)
//
// It ends with the hardest level's time per move on crowded 15-column boards (the largest board, many pieces in
// play): the target is an answer within one second.

import os from "node:os";
import { fileURLToPath } from "node:url";
import { Worker, isMainThread, parentPort } from "node:worker_threads";

import { LEVELS, chooseMove } from "../static/js/ai.js";
import { BLUE, DEFAULT_SIZE, MAX_SIZE, MIN_SIZE, State, randomThrow } from "../static/js/rules/tab.js";
import { seeded } from "../static/js/seeded.js";

const HARDEST = LEVELS.at(-1);
// A game that long has stopped being about skill (none has come close in practice).
const MAX_ACTIONS = 20_000;
const CHUNK = 10;


/** Play one game; return the winning level (null for a game cut at MAX_ACTIONS) and the time of each move. */
function playGame({ size, blue, red, seed }) {
  const sticks = seeded(seed);
  const choices = seeded(seed ^ 0x5bd1e995);
  const state = State.initial(size);
  const timing = { [blue]: [], [red]: [] };
  for (let actions = 0; state.winner === null && actions < MAX_ACTIONS; actions++) {
    if (state.canThrow) state.throw(randomThrow(sticks));
    else if (state.mustPass) state.passTurn();
    else {
      const level = state.turn === BLUE ? blue : red;
      const started = performance.now();
      const move = chooseMove(state, level, choices);
      timing[level].push(performance.now() - started);
      state.apply(move);
    }
  }
  return { winner: state.winner === null ? null : state.winner === BLUE ? blue : red, timing };
}

/** Play games `first` … `first + count - 1` of a pairing and sum up what the report needs. */
function playChunk({ size, weaker, stronger, first, count, run }) {
  const result = { strongerWins: 0, weakerWins: 0, cut: 0, time: {} };
  for (const level of [weaker, stronger]) result.time[level] = { moves: 0, total: 0, max: 0 };
  for (let game = first; game < first + count; game++) {
    // Each level starts half of the games.
    const [blue, red] = game % 2 === 0 ? [stronger, weaker] : [weaker, stronger];
    const seed = (run * 7919 + weaker * 1_000_003 + stronger * 10_007 + game * 2_654_435_761) | 0;
    const { winner, timing } = playGame({ size, blue, red, seed });
    if (winner === stronger) result.strongerWins++;
    else if (winner === weaker) result.weakerWins++;
    else result.cut++;
    for (const level of [weaker, stronger]) {
      const sum = result.time[level];
      for (const ms of timing[level]) {
        sum.moves++;
        sum.total += ms;
        sum.max = Math.max(sum.max, ms);
      }
    }
  }
  return result;
}

/** Return the 95% Wilson score interval of `wins` out of `games`. */
function wilson(wins, games) {
  const z = 1.959964;
  const p = wins / games;
  const denominator = 1 + (z * z) / games;
  const centre = (p + (z * z) / (2 * games)) / denominator;
  const half = (z * Math.sqrt((p * (1 - p)) / games + (z * z) / (4 * games * games))) / denominator;
  return [centre - half, centre + half];
}

/** Play every pairing on a pool of workers; resolve to the summed results by pairing. */
function runPairings(pairings, { size, games, run, workers }) {
  const tasks = [];
  for (const [weaker, stronger] of pairings) {
    for (let first = 0; first < games; first += CHUNK) {
      tasks.push({ size, weaker, stronger, first, count: Math.min(CHUNK, games - first), run });
    }
  }
  // The slow pairings first, so that no thread is left alone with one at the end.
  tasks.sort((a, b) => b.stronger + b.weaker - (a.stronger + a.weaker));
  const results = new Map(pairings.map(([weaker, stronger]) => [`${weaker}-${stronger}`, null]));
  return new Promise((resolve, reject) => {
    let next = 0;
    let running = 0;
    const feed = (worker) => {
      if (next < tasks.length) {
        worker.postMessage(tasks[next++]);
        running++;
      } else {
        worker.terminate();
        if (running === 0 && [...results.values()].every((result) => result !== null)) resolve(results);
      }
    };
    for (let index = 0; index < Math.min(workers, tasks.length); index++) {
      const worker = new Worker(fileURLToPath(import.meta.url));
      worker.on("error", reject);
      worker.on("message", ({ task, result }) => {
        running--;
        const id = `${task.weaker}-${task.stronger}`;
        results.set(id, merge(results.get(id), result));
        feed(worker);
      });
      feed(worker);
    }
  });
}

function merge(sum, part) {
  if (sum === null) return part;
  const merged = {
    strongerWins: sum.strongerWins + part.strongerWins,
    weakerWins: sum.weakerWins + part.weakerWins,
    cut: sum.cut + part.cut,
    time: {},
  };
  for (const level of Object.keys(sum.time)) {
    merged.time[level] = {
      moves: sum.time[level].moves + part.time[level].moves,
      total: sum.time[level].total + part.time[level].total,
      max: Math.max(sum.time[level].max, part.time[level].max),
    };
  }
  return merged;
}

function table(pairings, results) {
  const rows = [["pairing", "games", "stronger wins", "95% CI", "ms/move avg (max), stronger", "weaker"]];
  for (const [weaker, stronger] of pairings) {
    const result = results.get(`${weaker}-${stronger}`);
    const games = result.strongerWins + result.weakerWins + result.cut;
    const [low, high] = wilson(result.strongerWins, games);
    const time = (level) => {
      const { moves, total, max } = result.time[level];
      return `L${level}: ${(total / moves).toFixed(2)} (${max.toFixed(1)})`;
    };
    const percent = (x) => `${(100 * x).toFixed(1)}%`;
    rows.push([
      `L${stronger} vs L${weaker}`,
      String(games) + (result.cut > 0 ? ` (${result.cut} cut)` : ""),
      percent(result.strongerWins / games),
      `${percent(low)} – ${percent(high)}`,
      time(stronger),
      time(weaker),
    ]);
  }
  const widths = rows[0].map((_, column) => Math.max(...rows.map((row) => row[column].length)));
  return rows.map((row) => row.map((cell, column) => cell.padEnd(widths[column])).join("  ").trimEnd()).join("\n");
}

function parseArguments(argv) {
  const options = { games: 1000, size: DEFAULT_SIZE, workers: null };
  const names = { "--games": "games", "--size": "size", "--workers": "workers" };
  for (let index = 0; index < argv.length; index += 2) {
    const name = names[argv[index]];
    const value = Number(argv[index + 1]);
    if (name === undefined || !Number.isInteger(value) || value < 1) usage();
    options[name] = value;
  }
  const { size } = options;
  if (size < MIN_SIZE || size > MAX_SIZE || size % 2 === 0) usage(`the size is odd, from ${MIN_SIZE} to ${MAX_SIZE}`);
  options.workers ??= os.availableParallelism?.() ?? os.cpus().length;
  return options;
}

function usage(problem) {
  if (problem) console.log(problem);
  console.log("usage: node bench/ai.mjs [--games N] [--size S] [--workers W]");
  process.exit(2);
}

/** Return, by level, the time per move over every pairing the level played. */
function timesByLevel(results) {
  const byLevel = new Map();
  for (const result of results.values()) {
    for (const [level, { moves, total, max }] of Object.entries(result.time)) {
      const sum = byLevel.get(level) ?? { moves: 0, total: 0, max: 0 };
      byLevel.set(level, { moves: sum.moves + moves, total: sum.total + total, max: Math.max(sum.max, max) });
    }
  }
  return [...byLevel].sort(([a], [b]) => a - b).map(([level, { moves, total, max }]) =>
    `L${level} ${(total / moves).toFixed(2)} ms avg, ${max.toFixed(1)} ms max (${moves} moves)`,
  );
}

/** Return `count` positions of random games on the largest board with many pieces in play and a choice to make. */
function crowdedPositions(count) {
  const positions = [];
  for (let seed = 10; positions.length < count; seed++) {
    const random = seeded(seed);
    const state = State.initial(MAX_SIZE);
    for (let moves = 0; state.winner === null && moves < 400; ) {
      if (state.canThrow) state.throw(randomThrow(random));
      else if (state.mustPass) state.passTurn();
      else {
        const pieces = state.pieces.filter((piece) => piece !== null);
        const moving = pieces.filter((piece) => piece.inMotion).length;
        const legal = state.legalMoves();
        if (pieces.length >= 24 && moving >= 16 && legal.length >= 5) {
          positions.push(state.clone());
          break;
        }
        state.apply(legal[Math.floor(random() * legal.length)]);
        moves++;
      }
    }
  }
  return positions;
}

/** Time the hardest level on crowded boards; return the report's line. */
function crowdedTimes(count) {
  const times = crowdedPositions(count).map((state) => {
    const started = performance.now();
    chooseMove(state, HARDEST.level, seeded(7));
    return performance.now() - started;
  });
  const average = times.reduce((sum, time) => sum + time, 0) / times.length;
  return (
    `L${HARDEST.level} on ${count} crowded ${MAX_SIZE}-column boards: ` +
    `${average.toFixed(0)} ms avg, ${Math.max(...times).toFixed(0)} ms max per move (target: under 1000 ms)`
  );
}

async function main() {
  const { games, size, workers } = parseArguments(process.argv.slice(2));
  const levels = LEVELS.map((entry) => entry.level);
  const pairings = levels.flatMap((stronger) => levels.filter((weaker) => weaker < stronger).map((weaker) => [weaker, stronger]));
  const started = performance.now();
  const seconds = (since) => `${((performance.now() - since) / 1000).toFixed(0)} s`;
  console.log(`Tâb CPU levels on a ${size}-column board, ${workers} threads`);
  console.log(LEVELS.map(({ level, name }) => `  L${level}: ${name}`).join("\n"));

  console.log(`\n${games} games per pairing, each level starting half of them`);
  const main = await runPairings(pairings, { size, games, run: 1, workers });
  console.log(table(pairings, main));
  console.log(`time per move: ${timesByLevel(main).join("; ")}`);
  console.log(`(${seconds(started)})`);

  console.log(`\n${crowdedTimes(8)}`);
  console.log(`\ntotal ${seconds(started)}`);
}

if (isMainThread) {
  await main();
} else {
  parentPort.on("message", (task) => parentPort.postMessage({ task, result: playChunk(task) }));
}
