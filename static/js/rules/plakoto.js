// Plakoto: the board, the dice and the legal moves, as the Plakoto API's page describes them.
// The twin of games/rules/plakoto.py, which is the reference: same positions, same allowed moves and dice, same
// JSON. tests/js/plakoto.test.mjs holds this module to the vectors that the Python module writes.

export const WHITE = "W";
export const BLACK = "B";
export const SIDES = Object.freeze([WHITE, BLACK]);
export const PIECES = 15;
export const MOTHER = Object.freeze({ W: 24, B: 1 });
export const DIRECTION = Object.freeze({ W: -1, B: 1 });
export const OFF = Object.freeze({ W: 0, B: 25 });
const HOME = { W: [1, 6], B: [19, 24] };
const FACES = [1, 2, 3, 4, 5, 6];

/** A move the rules refuse; `message` is the API's. */
export class IllegalMove extends Error {
  constructor(message) {
    super(message);
    this.name = "IllegalMove";
  }
}

export function other(side) {
  return side === WHITE ? BLACK : WHITE;
}

/** Return how far a piece of `side` on `point` is from bearing off. */
export function distanceOff(side, point) {
  return side === WHITE ? point : 25 - point;
}

const inHome = (side, point) => point >= HOME[side][0] && point <= HOME[side][1];
const desc = (dice) => [...dice].sort((a, b) => b - a);

/** A position: the points' stacks ([colour, number], bottom first), the pieces off, the turn, dice and end. */
export class State {
  constructor() {
    this.points = Array.from({ length: 25 }, () => []);
    this.off = { W: [], B: [] };
    this.turn = WHITE;
    this.dice = null;
    this.diceLeft = [];
    this.rollDue = true;
    this.passes = [];
    this.result = null;
    this.score = null;
    this._plan = null;
  }

  static start() {
    const state = new State();
    for (let number = 1; number <= PIECES; number++) {
      state.points[MOTHER.W].push([WHITE, number]);
      state.points[MOTHER.B].push([BLACK, number]);
    }
    return state;
  }

  /** Rebuild a state from the JSON of games/rules/plakoto.py (`State.to_json`). */
  static fromJSON(data) {
    const state = new State();
    data.points.forEach((stack, index) => {
      state.points[index + 1] = stack.map((piece) => [piece[0], Number(piece.slice(1))]);
    });
    state.off = { W: [...data.off.W], B: [...data.off.B] };
    state.turn = data.turn;
    state.dice = data.dice ? [data.dice[0], data.dice[1]] : null;
    state.diceLeft = [...data.dice_left];
    state.rollDue = data.roll_due;
    state.passes = data.passes.map((entry) => ({ ...entry, dice: [...entry.dice] }));
    state.result = data.result;
    state.score = data.score;
    return state;
  }

  toJSON() {
    return {
      points: this.points.slice(1).map((stack) => stack.map(([colour, number]) => `${colour}${number}`)),
      off: { W: [...this.off.W], B: [...this.off.B] },
      turn: this.turn,
      dice: this.dice ? [...this.dice] : null,
      dice_left: [...this.diceLeft],
      roll_due: this.rollDue,
      passes: this.passes.map((entry) => ({ ...entry, dice: [...entry.dice] })),
      result: this.result,
      score: this.score,
    };
  }

  copy() {
    const state = new State();
    state.points = this.points.map((stack) => stack.map((piece) => [...piece]));
    state.off = { W: [...this.off.W], B: [...this.off.B] };
    state.turn = this.turn;
    state.dice = this.dice ? [...this.dice] : null;
    state.diceLeft = [...this.diceLeft];
    state.rollDue = this.rollDue;
    state.passes = this.passes.map((entry) => ({ ...entry, dice: [...entry.dice] }));
    state.result = this.result;
    state.score = this.score;
    return state;
  }

  top(point) {
    const stack = this.points[point];
    return stack.length ? stack[stack.length - 1][0] : null;
  }

  /** Return the colour of the piece pinned on `point`, or null. */
  pinned(point) {
    const stack = this.points[point];
    return stack.length >= 2 && stack[0][0] !== stack[stack.length - 1][0] ? stack[0][0] : null;
  }

  /** Return the side that holds a door on `point` (two pieces or more, or a pinner), or null. */
  doorOf(point) {
    const stack = this.points[point];
    return stack.length >= 2 ? stack[stack.length - 1][0] : null;
  }

  has(side, point) {
    return this.points[point].some((piece) => piece[0] === side);
  }

  motherPinned(side) {
    const stack = this.points[MOTHER[side]];
    return this.pinned(MOTHER[side]) === side && stack.filter((piece) => piece[0] === side).length === 1;
  }

  _mayBearOff(side) {
    for (let point = 0; point < 25; point++) {
      const stack = this.points[point];
      for (let index = 0; index < stack.length; index++) {
        if (stack[index][0] !== side) continue;
        if (!inHome(side, point)) return false;
        if (index === 0 && stack.length >= 2 && stack[stack.length - 1][0] !== side) return false;
      }
    }
    return true;
  }

  _farthest(side) {
    let farthest = 0;
    for (let point = 1; point <= 24; point++) {
      if (this.has(side, point)) farthest = Math.max(farthest, distanceOff(side, point));
    }
    return farthest;
  }

  /** Return every single move of `side` by `die` the board allows, {origin, destination, die}, by origin. */
  steps(side, die) {
    const steps = [];
    let bearing = null;
    for (let origin = 1; origin <= 24; origin++) {
      if (this.top(origin) !== side) continue;
      const destination = origin + DIRECTION[side] * die;
      if (destination >= 1 && destination <= 24) {
        const door = this.doorOf(destination);
        if (door === null || door === side) steps.push({ origin, destination, die });
        continue;
      }
      if (bearing === null) bearing = this._mayBearOff(side);
      if (!bearing) continue;
      const distance = distanceOff(side, origin);
      if (die === distance || (die > distance && this._farthest(side) === distance)) {
        steps.push({ origin, destination: OFF[side], die });
      }
    }
    return steps;
  }

  applyStep(step) {
    const piece = this.points[step.origin].pop();
    if (step.destination === 0 || step.destination === 25) this.off[piece[0]].push(piece[1]);
    else this.points[step.destination].push(piece);
  }

  key() {
    return `${this.points.map((stack) => stack.map((piece) => piece[0]).join("")).join("|")}/${this.off.W.length}/${this.off.B.length}`;
  }

  /** Return how the game ends after `mover`'s move, [result, score], or null while it goes on. */
  ending(mover) {
    const loser = other(mover);
    if (this.off[mover].length === PIECES) return [mover, this.off[loser].length === 0 ? 2 : 1];
    if (this.motherPinned(WHITE) && this.motherPinned(BLACK)) return ["D", 0];
    for (const side of [mover, loser]) {
      if (this.motherPinned(other(side)) && !this.has(side, MOTHER[side])) return [side, 2];
    }
    return null;
  }

  /** Return the moves allowed now to the player on turn: a Map "origin-destination" → die. */
  plan() {
    if (this._plan === null) {
      this._plan = new Map();
      if (this.turn !== null && !this.rollDue && this.result === null && this.diceLeft.length) {
        this._plan = allowed(this, this.turn, desc(this.diceLeft), this.dice);
      }
    }
    return this._plan;
  }

  /** Return the allowed moves as [origin, destination, die], sorted. */
  planList() {
    return [...this.plan()]
      .map(([move, die]) => [...move.split("-").map(Number), die])
      .sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  }

  /** Make the player on turn's move from `origin` to `destination` (0 or 25: off); throw IllegalMove. */
  move(origin, destination) {
    const side = this.turn;
    if (side === null || this.rollDue || this.result !== null) throw new IllegalMove("Game is not in action.");
    if (!(origin >= 1 && origin <= 24) || this.top(origin) !== side) throw new IllegalMove("This piece cannot move.");
    const die = this.plan().get(`${origin}-${destination}`);
    if (die === undefined) throw new IllegalMove("This move is illegal.");
    const step = { origin, destination, die };
    this.applyStep(step);
    this.diceLeft.splice(this.diceLeft.indexOf(die), 1);
    this.passes = [];
    this._plan = null;
    const ending = this.ending(side);
    if (ending !== null) this._end(...ending);
    else if (!this.diceLeft.length || !this.plan().size) this._nextTurn();
    return step;
  }

  _nextTurn() {
    this.turn = other(this.turn);
    this.dice = null;
    this.diceLeft = [];
    this.rollDue = true;
    this._plan = null;
  }

  _end(result, score) {
    this.result = result;
    this.score = score;
    this.turn = null;
    this.dice = null;
    this.diceLeft = [];
    this.rollDue = false;
    this._plan = null;
  }

  /** Roll the dice of the turn that begins; return false when the player passed (or the game ended). */
  roll(dice) {
    const side = this.turn;
    this.dice = [dice[0], dice[1]];
    this.diceLeft = dice[0] === dice[1] ? [dice[0], dice[0], dice[0], dice[0]] : desc(dice);
    this.rollDue = false;
    this._plan = null;
    if (this.plan().size) return true;
    this.passes.push({ color: side, dice: [dice[0], dice[1]] });
    if (!this._couldMove(side) && !this._couldMove(other(side))) this._end("D", 0);
    else this._nextTurn();
    return false;
  }

  _couldMove(side) {
    return FACES.some((die) => this.steps(side, die).length > 0);
  }
}

function allowed(state, side, dice, rolled) {
  const memo = new Map();
  const most = mostDice(state, side, dice, memo);
  const result = new Map();
  if (most === 0) return result;
  for (const die of [...new Set(dice)].sort((a, b) => a - b)) {
    const rest = [...dice];
    rest.splice(rest.indexOf(die), 1);
    for (const step of state.steps(side, die)) {
      const key = `${step.origin}-${step.destination}`;
      if (result.has(key)) continue;
      const after = state.copy();
      after.applyStep(step);
      const used = after.ending(side) !== null ? dice.length : 1 + mostDice(after, side, rest, memo);
      if (used === most) result.set(key, die);
    }
  }
  const fullRoll = rolled !== null && rolled[0] !== rolled[1] && dice.length === 2;
  const larger = Math.max(...dice);
  if (most === 1 && fullRoll && [...result.values()].includes(larger)) {
    for (const [key, die] of [...result]) if (die !== larger) result.delete(key);
  }
  return result;
}

function mostDice(state, side, dice, memo) {
  if (!dice.length) return 0;
  const key = `${state.key()}#${dice.join(",")}`;
  if (memo.has(key)) return memo.get(key);
  let best = 0;
  for (const die of [...new Set(dice)].sort((a, b) => b - a)) {
    const rest = [...dice];
    rest.splice(rest.indexOf(die), 1);
    for (const step of state.steps(side, die)) {
      const after = state.copy();
      after.applyStep(step);
      const used = after.ending(side) !== null ? dice.length : 1 + mostDice(after, side, rest, memo);
      best = Math.max(best, used);
      if (best === dice.length) {
        memo.set(key, best);
        return best;
      }
    }
  }
  memo.set(key, best);
  return best;
}
