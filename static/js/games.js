// The two kinds of game the page plays, and how to read what changed between two of their frames.
//
// A game produces "frames": snapshots in the API's words (pieces, turn, dice, step, cell, selected, mustPass,
// winner) with colours instead of nicks, plus `over` and a `version` that grows with every change. The page
// (app.js) shows them one at a time; a game only needs the page's `enqueue(game, frame)`, `idle()`, `pace()`,
// `notice(text)`, `clearNotice()` and `onStreamLost(game)`.

import { LEVELS, chooseMove } from "./ai.js";
import * as online from "./online.js";
import { BLUE, RED, State, opponent, randomThrow } from "./rules/tab.js";

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

const LOCAL_KEY = "tab.local"; // sessionStorage: the game against the computer in play, so that a reload resumes it

/** A game against the computer, played entirely in the browser with the rules engine and the CPU player. Each change
 * is saved for the tab: a reload resumes the game where it was (no way out of a lost game, no game lost by mistake). */
export class LocalGame {
  /** Return the game this tab was playing against the computer, if one was left in play; else null. */
  static resumed(app) {
    try {
      const saved = JSON.parse(sessionStorage.getItem(LOCAL_KEY) || "null");
      if (!saved) return null;
      const game = new LocalGame(app, saved);
      game.state = State.fromJSON(saved.state);
      if (game.state.winner !== null) throw new Error("that game is over");
      Object.assign(game, { moves: saved.moves, captured: saved.captured });
      return game;
    } catch {
      sessionStorage.removeItem(LOCAL_KEY);
      return null;
    }
  }

  constructor(app, { size, level, humanFirst }) {
    this.kind = "local";
    this.app = app;
    this.state = State.initial(size);
    this.me = humanFirst ? BLUE : RED;
    // A game saved with a level that is no more (the page once had five) goes on at the hardest.
    this.level = LEVELS.some((entry) => entry.level === level) ? level : LEVELS.at(-1).level;
    this.levelName = LEVELS.find((entry) => entry.level === this.level).name;
    this.humanFirst = humanFirst;
    this.names = { [this.me]: "You", [opponent(this.me)]: "The computer" };
    this.version = 0;
    this.active = true;
    this.thinking = false;
    this.moves = 0;
    this.captured = 0;
  }

  get busy() {
    return this.thinking;
  }

  start() {
    this._push();
    this._computer();
  }

  throwSticks() {
    this.state.throw(randomThrow());
    this._push();
    this._computer();
  }

  select(cell) {
    const move = this.state.select(cell);
    if (move) {
      this.moves += 1;
      if (move.captures) this.captured += 1;
    }
    this._push();
    this._computer();
  }

  passTurn() {
    this.state.passTurn();
    this._push();
    this._computer();
  }

  quit() {
    this.close();
  }

  close() {
    this.active = false;
    sessionStorage.removeItem(LOCAL_KEY);
  }

  _save() {
    const { state, level, humanFirst, moves, captured } = this;
    const saved = { size: state.size, level, humanFirst, moves, captured, state: state.toJSON() };
    try {
      sessionStorage.setItem(LOCAL_KEY, JSON.stringify(saved));
    } catch {
      // No storage (private browsing, full): the game goes on, but a reload would not bring it back.
    }
  }

  _push() {
    const state = this.state;
    if (this.active && state.winner === null) this._save();
    else sessionStorage.removeItem(LOCAL_KEY);
    this.version += 1;
    this.app.enqueue(this, {
      ...state.toJSON(),
      mustPass: state.mustPass ? state.turn : null,
      over: state.winner !== null,
      version: this.version,
    });
  }

  /** Play the computer's turn: throw while it may, pass when it must, otherwise move as its level decides. */
  async _computer() {
    if (this.thinking) return;
    const computer = opponent(this.me);
    this.thinking = true;
    try {
      while (this.active && this.state.winner === null && this.state.turn === computer) {
        await this.app.idle();
        await sleep(this.app.pace());
        if (!this.active) return;
        const state = this.state;
        if (state.canThrow) {
          state.throw(randomThrow());
        } else if (state.mustPass) {
          state.passTurn();
        } else {
          state.apply(chooseMove(state, this.level));
        }
        this._push();
      }
    } finally {
      this.thinking = false;
    }
  }
}

/** A game against another player, through the server: actions are requests, frames come from `update`. */
export class OnlineGame {
  constructor(app, login, { id, group, size }) {
    this.kind = "online";
    this.app = app;
    this.login = login;
    this.id = id;
    this.group = group;
    this.size = size;
    this.me = null;
    this.players = null;
    this.names = null;
    this.active = true;
    this.requesting = false;
    this.awaiting = false;
    this.quitting = false;
    this.lastMessageAt = Date.now();
  }

  get busy() {
    return this.requesting || this.awaiting;
  }

  connect() {
    this.stream = new online.UpdateStream(this.login, this.id, {
      onMessage: (message, version) => this._receive(message, version),
      onLost: () => this.app.onStreamLost(this),
      onReconnecting: () => this.app.notice("The connection to the server was lost: reconnecting…"),
      onOpen: () => this.app.clearNotice(),
    });
  }

  _receive(message, version) {
    if (!this.active) return;
    this.awaiting = false;
    clearTimeout(this.awaitTimer);
    this.previousMessageAt = this.lastMessageAt;
    this.lastMessageAt = Date.now();
    if (!Array.isArray(message.pieces)) {
      // A game that ended while waiting for an opponent has no board.
      this.app.enqueue(this, { over: true, cancelled: true, winner: null, version });
      return;
    }
    if (!this.players) {
      this.players = message.players;
      this.me = this.players[this.login.nick];
      this.names = {};
      for (const [nick, color] of Object.entries(this.players)) {
        this.names[color] = color === this.me ? "You" : nick;
      }
      this.nicks = Object.fromEntries(Object.entries(this.players).map(([nick, color]) => [color, nick]));
    }
    const colorOf = (nick) => (nick === null || nick === undefined ? null : (this.players[nick] ?? null));
    this.app.enqueue(this, {
      size: message.pieces.length / 4,
      pieces: message.pieces,
      turn: colorOf(message.turn),
      dice: message.dice ?? null,
      step: message.step ?? "from",
      cell: message.cell ?? null,
      selected: message.selected ?? null,
      mustPass: colorOf(message.mustPass),
      winner: colorOf(message.winner),
      over: "winner" in message,
      version,
    });
  }

  async _request(call) {
    if (this.requesting) return;
    this.requesting = true;
    // The answer comes through the stream, maybe even before the response: until then, no other action.
    this.awaiting = true;
    clearTimeout(this.awaitTimer);
    this.awaitTimer = setTimeout(() => {
      this.awaiting = false;
    }, 5000);
    try {
      await call();
    } catch (problem) {
      this.awaiting = false;
      throw problem;
    } finally {
      this.requesting = false;
    }
  }

  throwSticks() {
    return this._request(() => online.roll(this.id));
  }

  select(cell) {
    return this._request(() => online.notify(this.id, cell));
  }

  passTurn() {
    return this._request(() => online.pass(this.id));
  }

  async quit() {
    this.quitting = true;
    await online.leave(this.id);
  }

  close() {
    this.active = false;
    clearTimeout(this.awaitTimer);
    this.stream?.close();
  }
}

// ---------------------------------------------------------------------------------------------------------
// What changed between two frames

function samePiece(a, b) {
  if (!a || !b) return a === b || (!a && !b);
  return a.color === b.color && a.inMotion === b.inMotion && a.reachedLastRow === b.reachedLastRow;
}

export function changesBetween(previous, next) {
  if (!previous) return { first: true };
  const change = {};
  const moved = previous.pieces.some((piece, index) => !samePiece(piece, next.pieces[index]));
  if (moved && next.step === "from" && Array.isArray(next.selected) && next.selected.length === 2) {
    const [from, to] = next.selected;
    const target = previous.pieces[to];
    const piece = next.pieces[to];
    if (piece) {
      change.move = { from, to, piece, captured: target && target.color !== piece.color ? target : null };
    }
  }
  // A new throw: the dice appear, or are thrown again (no move, 1/4/6) without a selection in between.
  if (next.dice && (!previous.dice || (previous.step === "from" && next.step === "from" && !moved))) {
    change.thrown = next.dice;
    change.thrower = next.turn;
  }
  if (!moved && !next.over && previous.turn !== next.turn) change.passed = previous.turn;
  if (previous.step === "from" && next.step === "to") change.forked = next.turn;
  if (previous.step === "to" && next.step === "from" && !moved) change.cancelled = next.turn;
  return change;
}

export function stateOf(frame) {
  return State.fromJSON({
    size: frame.size,
    pieces: frame.pieces,
    turn: frame.turn,
    dice: frame.dice,
    step: frame.step,
    cell: frame.cell,
    selected: frame.selected,
    winner: frame.over ? frame.winner : null,
  });
}
