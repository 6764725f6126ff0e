// A draughts game's page: the board live while the game is played (the room's stream), or its replay once it is over
// (the log applied move by move with the browser's rules, static/js/rules/draughts.js).

import { DraughtsBoard } from "./board.js";
import { START, State, squareIndex } from "../rules/draughts.js";
import { replayWithAnalysis } from "../analysis.js";

const $ = (id) => document.getElementById(id);
const canvas = $("board");
const board = new DraughtsBoard(canvas);
const STATES = {
  WAITING: "Waiting for the second player…",
  PLAYING: "",
  DRAW: "Drawn.",
  WHITE_WON: "White won.",
  BLACK_WON: "Black won.",
};

function clock(ms) {
  const seconds = Math.ceil(Math.max(0, ms) / 1000);
  return `${Math.floor(seconds / 60)}:${String(seconds % 60).padStart(2, "0")}`;
}

if (canvas.dataset.stream) {
  const stream = new EventSource(canvas.dataset.stream);
  stream.onmessage = (event) => {
    const view = JSON.parse(event.data);
    board.show(view.board, view.turn);
    const turn = view.turn === "w" ? "White" : "Black";
    const text = view.state === "PLAYING" ? `${turn} to move · white ${clock(view.times[0])}, black ${clock(view.times[1])}` : STATES[view.state];
    $("watch-status").textContent = text;
    if (!["WAITING", "PLAYING"].includes(view.state)) {
      stream.close();
      // Over: the page shows the result and the replay.
      setTimeout(() => location.reload(), 1500);
    }
  };
} else if ($("replay-data")) {
  const replay = JSON.parse($("replay-data").textContent);
  const stepsOf = (log) => {
    const positions = [{ board: START, turn: "w", caption: "The start.", seq: null }];
    const state = new State();
    for (const entry of log) {
      if (!entry.data || !entry.data.path) continue;
      const move = state.find(entry.data.path.map(squareIndex));
      state.apply(move);
      const side = state.turn === "w" ? "Black" : "White";
      positions.push({ board: state.text, turn: state.turn, last: move.path, caption: `${side}: ${entry.data.path.join(" ")}`, seq: entry.seq });
    }
    return positions;
  };
  replayWithAnalysis({
    replay,
    stepsOf,
    show: (position) => {
      board.last = position.last || [];
      board.show(position.board, position.turn);
    },
    names: replay.players.map((player, seat) => `${seat ? "Black" : "White"} (${player})`),
    colours: ["#b45309", "#1f2937"],
  });
} else {
  board.show(START, "w");
}
