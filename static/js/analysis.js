// The computer's analysis of a finished game, under its replay: each position's chance of winning as a curve (for two
// players the first one's, the other's being the rest; for more, one line a player), and the turns that cost the most,
// marked in the log and listed with the better turn, which the board shows on request. The pages of every game share
// it: each tells which log entry led to each step of its replay, how to go to a step, and how to show a better turn.

import { stepThrough } from "./stepper.js";

const SVG = "http://www.w3.org/2000/svg";
const WIDTH = 1000;
const HEIGHT = 200;
const MARGIN = 12;
const percent = (chance) => `${Math.round(chance * 100)} %`;

/** Return each step's chances, from the analysis's chances by log entry (a step with none keeps the one before). */
function chancesOf(analysis, seqs) {
  const bySeq = new Map(analysis.chances.map((point) => [point.seq, point.seats]));
  let last = analysis.chances.length ? analysis.chances[0].seats : null;
  return seqs.map((seq) => {
    if (bySeq.has(seq)) last = bySeq.get(seq);
    return last;
  });
}

function element(name, attributes, parent) {
  const node = document.createElementNS(SVG, name);
  for (const [key, value] of Object.entries(attributes)) node.setAttribute(key, value);
  parent.append(node);
  return node;
}

/**
 * Draw the analysis and return `{ at(index) }`, which a replay calls at each step it shows.
 * analysis: the page's replay data's; seqs: the log entry (seq) that led to each step, null for the start;
 * names and colours: each seat's; go(index): show a step; showBetter(mark, before): show on the board the better
 * turn of a mark, instead of the one taken from step `before`.
 */
export function showAnalysis({ analysis, seqs, names, colours, go, showBetter }) {
  const svg = document.getElementById("analysis-curve");
  const list = document.getElementById("analysis-marks");
  const now = document.getElementById("analysis-now");
  const chances = chancesOf(analysis, seqs);
  const last = Math.max(1, seqs.length - 1);
  const x = (index) => (index / last) * WIDTH;
  // A margin above and below, so that the marks of a certain win or loss are not cut in half.
  const y = (chance) => MARGIN + (1 - chance) * (HEIGHT - 2 * MARGIN);
  element("line", { x1: 0, x2: WIDTH, y1: y(0.5), y2: y(0.5), class: "analysis-even" }, svg);
  const seats = names.length === 2 ? [0] : names.map((_, seat) => seat);
  for (const seat of seats) {
    const points = chances.map((each, index) => (each ? `${x(index).toFixed(1)},${y(each[seat]).toFixed(1)}` : null)).filter(Boolean);
    if (names.length === 2) {
      element("polygon", { points: `0,${y(0)} ${points.join(" ")} ${WIDTH},${y(0)}`, class: "analysis-area", fill: colours[seat] }, svg);
    }
    element("polyline", { points: points.join(" "), class: "analysis-line", stroke: colours[seat], "data-seat": seat }, svg);
  }
  const cursor = element("line", { x1: 0, x2: 0, y1: 0, y2: HEIGHT, class: "analysis-cursor" }, svg);
  const stepOf = (seq) => seqs.indexOf(seq);
  const marks = analysis.marks.filter((mark) => stepOf(mark.seq) > 0);
  marks.forEach((mark, rank) => {
    const after = stepOf(mark.last);
    // A line of no length with round ends: a dot that the curve's stretching leaves round.
    const at = { x: x(after), y: y(chances[after][names.length === 2 ? 0 : mark.seat]) };
    const dot = element("line", { x1: at.x, x2: at.x, y1: at.y, y2: at.y, class: "analysis-mark" }, svg);
    element("title", {}, dot).textContent = `${rank + 1}: ${names[mark.seat]}, ${percent(mark.before)} → ${percent(mark.after)}`;
  });
  svg.addEventListener("click", (event) => {
    const box = svg.getBoundingClientRect();
    go(Math.round(((event.clientX - box.left) / box.width) * last));
  });

  // The log's rows of each costly turn, and the list of them with their better turns.
  const rows = [...document.querySelectorAll("#log tr[data-seq]")];
  marks.forEach((mark, rank) => {
    for (const row of rows) {
      const seq = Number(row.dataset.seq);
      if (seq < mark.seq || seq > mark.last) continue;
      row.classList.add("is-costly");
      if (seq === mark.last) row.cells[row.cells.length - 1].dataset.cost = `${rank + 1}`;
      row.title = `Costly turn ${rank + 1}: ${percent(mark.before)} → ${percent(mark.after)}`;
    }
    const item = document.createElement("li");
    item.dataset.seq = mark.seq;
    const before = stepOf(mark.seq) - 1;
    item.append(`${names[mark.seat]}, step ${before + 1}: chance ${percent(mark.before)} → ${percent(mark.after)} `);
    const taken = document.createElement("button");
    taken.type = "button";
    taken.className = "button button-small";
    taken.textContent = "The turn taken";
    taken.addEventListener("click", () => go(stepOf(mark.last)));
    const better = document.createElement("button");
    better.type = "button";
    better.className = "button button-small button-primary analysis-better";
    better.textContent = "The better turn";
    better.addEventListener("click", () => {
      go(before);
      showBetter(mark, before);
    });
    item.append(taken, " ", better);
    list.append(item);
  });
  const how = document.getElementById("analysis-how");
  const looked = `${analysis.positions.toLocaleString("en")} positions looked at`;
  how.textContent = analysis.depth ? `Searched up to ${analysis.depth} turns ahead; ${looked}.` : `Judged by random playouts to the end; ${looked}.`;
  if (!marks.length) {
    const item = document.createElement("li");
    item.textContent = "No turn cost much: the computer found nothing clearly better.";
    list.append(item);
  }

  return {
    at(index) {
      cursor.setAttribute("x1", x(index));
      cursor.setAttribute("x2", x(index));
      const here = chances[index];
      now.textContent = here ? `Chances here: ${names.map((name, seat) => `${name} ${percent(here[seat])}`).join(", ")}.` : "";
    },
  };
}

/** Say, under the board, that it shows a mark's better turn. */
export function sayBetter(name, mark) {
  document.getElementById("replay-caption").textContent = `The better turn for ${name}, as the computer sees it: the chance stays ${percent(mark.before)} (the turn taken left ${percent(mark.after)}).`;
}

/** Return the log up to a mark's turn, then its better turn instead of the one taken. */
export function betterLog(log, mark) {
  return [...log.filter((entry) => entry.seq < mark.seq), ...mark.better.map((entry) => ({ ...entry, seat: mark.seat, seq: null }))];
}

/**
 * A replay with the stepper's controls and, once the game is analysed, the analysis under it. `stepsOf(log)` makes
 * the page's steps from log entries (each step with the `seq` of the entry that made it; null for the start), and
 * `show(step)` draws one.
 */
export function replayWithAnalysis({ replay, stepsOf, show, names, colours }) {
  const steps = stepsOf(replay.log);
  let chart = null;
  const go = stepThrough(steps, (step, at) => {
    show(step);
    chart?.at(at);
  });
  if (!replay.analysis) return;
  chart = showAnalysis({
    analysis: replay.analysis,
    seqs: steps.map((step) => step.seq ?? null),
    names,
    colours,
    go,
    showBetter: (mark) => {
      show(stepsOf(betterLog(replay.log, mark)).at(-1));
      sayBetter(names[mark.seat], mark);
    },
  });
  chart.at(steps.length - 1);
}
