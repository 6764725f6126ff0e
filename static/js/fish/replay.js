// A finished Fish game's replay: its log (every placement, move and removal) applied step by step with the browser's
// rules, from the board its seed dealt.

import { COLOURS, State } from "../rules/fish.js";
import { replayWithAnalysis } from "../analysis.js";
import { FishBoard } from "./board.js";

const $ = (id) => document.getElementById(id);
const replay = JSON.parse($("replay-data").textContent);
const label = (seat) => COLOURS[seat][0].toUpperCase() + COLOURS[seat].slice(1);
const stepsOf = (log) => {
  const state = State.fromJSON(replay.start);
  const view = (sunk = null) => {
    const { board, players } = state.toJSON();
    return { board, players, sunk };
  };
  const steps = [{ view: view(), caption: "The ice, before the first penguin.", seq: null }];
  for (const entry of log) {
    if (entry.seat === null) continue;
    if (entry.kind === "place") {
      state.place(entry.seat, entry.data.row, entry.data.col);
      steps.push({ view: view(), caption: `${label(entry.seat)} places a penguin on row ${entry.data.row}, column ${entry.data.col}.`, seq: entry.seq });
    } else if (entry.kind === "move") {
      const { start, end } = entry.data;
      const fish = state.move(entry.seat, [start.row, start.col], [end.row, end.col]);
      steps.push({ view: view([start.row, start.col]), caption: `${label(entry.seat)} moves to row ${end.row}, column ${end.col}: ${fish} fish.`, seq: entry.seq });
    } else if (entry.kind === "remove") {
      state.remove(entry.seat);
      const why = entry.data.why === "timeout" ? "out of time" : "for a refused action";
      steps.push({ view: view(), caption: `${label(entry.seat)} is removed, ${why}.`, seq: entry.seq });
    }
  }
  return steps;
};
const board = new FishBoard($("board"));
// The curve's colour of each penguin colour (white ice would hide a white line).
const CURVE = { red: "#dc2626", white: "#64748b", brown: "#92400e", black: "#111827" };
replayWithAnalysis({
  replay,
  stepsOf,
  show: (step) => board.show(step.view),
  names: replay.players.map((player, seat) => `${label(seat)} (${player})`),
  colours: replay.players.map((_, seat) => CURVE[COLOURS[seat]]),
});
