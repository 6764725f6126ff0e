// A finished Plakoto game's replay: its log (every roll and move) applied step by step with the browser's rules.

import { State } from "../rules/plakoto.js";
import { replayWithAnalysis } from "../analysis.js";
import { PlakotoBoard } from "./board.js";

const $ = (id) => document.getElementById(id);
const replay = JSON.parse($("replay-data").textContent);
const name = (colour) => (colour === "W" ? "White" : "Black");
const stepsOf = (log) => {
  const state = State.start();
  const steps = [{ state: state.copy(), dice: null, diceLeft: null, caption: "The start.", seq: null }];
  for (const entry of log) {
    const mover = state.turn;
    if (entry.kind === "roll") {
      state.roll(entry.data.dice);
      const passed = entry.data.passed ? ": no move, the turn passes" : "";
      steps.push({ state: state.copy(), dice: entry.data.dice, diceLeft: [...state.diceLeft], caption: `${name(mover)} rolls ${entry.data.dice.join("-")}${passed}.`, seq: entry.seq });
    } else if (entry.kind === "move") {
      const dice = state.dice;
      state.move(entry.data.from, entry.data.to);
      const to = entry.data.to === 0 || entry.data.to === 25 ? "off" : entry.data.to;
      steps.push({ state: state.copy(), dice, diceLeft: [...state.diceLeft], caption: `${name(mover)}: ${entry.data.from} → ${to}.`, seq: entry.seq });
    }
  }
  return steps;
};
const board = new PlakotoBoard($("board"));
replayWithAnalysis({
  replay,
  stepsOf,
  show: (step) => board.show({ state: step.state, dice: step.dice, diceLeft: step.diceLeft }),
  names: replay.players.map((player, seat) => `${name(seat ? "B" : "W")} (${player})`),
  colours: ["#b45309", "#1f2937"],
});
