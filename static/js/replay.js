// The replay of a finished game: its log (embedded in the page) is played again with the browser's rules engine,
// one frame per entry, on the same canvas board as the game page. `window.replay` lets tests see what is shown.

import { betterLog, sayBetter, showAnalysis } from "./analysis.js";
import { State, throwFromSticks } from "./rules/tab.js";
import { showPlayers, showPosition, spectatorBoard } from "./spectate.js";

const data = JSON.parse(document.getElementById("replay-data").textContent);
const $ = (id) => document.getElementById(id);

/** Return the frames of the game: the position before the first entry, then after each entry of the log. */
function framesOf({ size, log }) {
  const state = State.initial(size);
  const frames = [{ position: state.toJSON(), lastMove: null, move: null, seq: null }];
  for (const entry of log) {
    const { kind, data: details } = entry;
    let move = null;
    if (kind === "throw") state.throw(throwFromSticks(details.sticks));
    else if (kind === "select" || kind === "deselect") state.select(details.cell);
    else if (kind === "pass") state.passTurn();
    else if (kind === "move") {
      move = { from: details.from, to: details.to, piece: state.pieces[details.from], captured: state.pieces[details.to] };
      state.apply({ origin: details.from, destination: details.to, captures: details.captures });
    }
    const lastMove = move ? { from: move.from, to: move.to } : frames[frames.length - 1].lastMove;
    frames.push({ position: state.toJSON(), lastMove: kind === "throw" || kind === "pass" ? null : lastMove, move, seq: entry.seq });
  }
  return frames;
}

const frames = framesOf(data);
const board = spectatorBoard($("board"));
const slider = $("replay-step");
const playButton = $("replay-play");
const rows = new Map([...document.querySelectorAll("#log tr[data-step]")].map((row) => [Number(row.dataset.step), row]));
let step = 0;
let timer = null;
let chart = null;

function caption(index) {
  if (index === 0) return "The start: Blue (at the bottom) throws first.";
  const row = rows.get(index);
  const who = row.cells[1].textContent.trim();
  return `Step ${index} of ${frames.length - 1}: ${who} ${row.cells[2].textContent.trim().replace(/\s+/g, " ")}`;
}

function show(index, { animate = false } = {}) {
  step = Math.max(0, Math.min(frames.length - 1, index));
  const frame = frames[step];
  showPosition(board, frame.position, frame.lastMove);
  if (animate && frame.move) board.animateMove(frame.move);
  const over = step === frames.length - 1;
  showPlayers(frame.position.pieces, over ? null : frame.position.turn);
  slider.value = String(step);
  $("replay-caption").textContent = caption(step);
  chart?.at(step);
  for (const [at, row] of rows) row.classList.toggle("is-current", at === step);
  const row = rows.get(step);
  if (row) {
    // Scroll the log alone, never the page: the board must stay in view.
    const box = row.closest(".table-scroll");
    box.scrollTop = row.offsetTop - box.clientHeight / 2;
  }
  $("replay-back").disabled = $("replay-first").disabled = step === 0;
  $("replay-forward").disabled = $("replay-last").disabled = over;
  if (over) pause();
}

/** How long Play shows each step, as the speed chosen says. */
const interval = () => Number($("replay-speed").value);

/** Step forward at the chosen speed, from now on. */
function run() {
  clearInterval(timer);
  timer = setInterval(() => show(step + 1, { animate: true }), interval());
}

function play() {
  if (step === frames.length - 1) show(0);
  playButton.textContent = "Pause";
  run();
}

function pause() {
  clearInterval(timer);
  timer = null;
  playButton.textContent = "Play";
}

$("replay-speed").addEventListener("change", () => {
  if (timer !== null) run();
});
$("replay-first").addEventListener("click", () => show(0));
$("replay-back").addEventListener("click", () => show(step - 1));
$("replay-forward").addEventListener("click", () => show(step + 1, { animate: true }));
$("replay-last").addEventListener("click", () => show(frames.length - 1));
playButton.addEventListener("click", () => (timer ? pause() : play()));
slider.addEventListener("input", () => show(Number(slider.value)));
for (const [at, row] of rows) row.addEventListener("click", () => show(at));
document.addEventListener("keydown", (event) => {
  const field = event.target instanceof HTMLInputElement || event.target instanceof HTMLSelectElement;
  if (field || event.altKey || event.ctrlKey || event.metaKey) return;
  const keys = { ArrowLeft: () => show(step - 1), ArrowRight: () => show(step + 1, { animate: true }), Home: () => show(0) };
  keys.End = () => show(frames.length - 1);
  keys[" "] = () => (timer ? pause() : play());
  if (keys[event.key] && !(event.key === " " && event.target instanceof HTMLButtonElement)) {
    event.preventDefault();
    keys[event.key]();
  }
});

window.replay = Object.freeze({
  step: () => step,
  steps: () => frames.length,
  playing: () => timer !== null,
  interval,
  board: () => board.view.pieces,
  position: () => frames[step].position,
  pieces: (index) => frames[index].position.pieces,
});

if (data.analysis) {
  chart = showAnalysis({
    analysis: data.analysis,
    seqs: frames.map((frame) => frame.seq),
    names: data.players,
    colours: ["#2563eb", "#dc2626"],
    go: (index) => {
      pause();
      show(index);
    },
    showBetter: (mark) => {
      const better = framesOf({ size: data.size, log: betterLog(data.log, mark) }).at(-1);
      showPosition(board, better.position, better.lastMove);
      sayBetter(data.players[mark.seat], mark);
    },
  });
}
show(0);
