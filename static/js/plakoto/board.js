// The Plakoto board on a canvas: the 24 points with their stacks (a pinned piece crossed, under its pinners), the
// bear-off trays, the dice (those used greyed), and the targets of a chosen piece. The play page and a game's page
// (its replay, or the game watched live) draw with it.

import { OFF, WHITE } from "../rules/plakoto.js";

const COLOURS = {
  felt: "#2f5d46",
  frame: "#5c3a1f",
  pointA: "#e8d3a8",
  pointB: "#9c4a1f",
  white: "#fbf4e2",
  whiteEdge: "#a8906a",
  black: "#2b1d14",
  blackEdge: "#0d0805",
  pinned: "#c23a27",
  target: "rgba(217, 162, 58, 0.85)",
  selected: "rgba(29, 78, 216, 0.9)",
  die: "#fffaf1",
};
const PIPS = {
  1: [[1, 1]],
  2: [[0, 0], [2, 2]],
  3: [[0, 0], [1, 1], [2, 2]],
  4: [[0, 0], [0, 2], [2, 0], [2, 2]],
  5: [[0, 0], [0, 2], [1, 1], [2, 0], [2, 2]],
  6: [[0, 0], [0, 1], [0, 2], [2, 0], [2, 1], [2, 2]],
};

export class PlakotoBoard {
  constructor(canvas) {
    this.canvas = canvas;
    this.geometry = null;
    this.view = null;
    new ResizeObserver(() => this.draw()).observe(canvas);
  }

  /**
   * Draw a position: `state` a rules State (points and pieces off), `dice` the roll and `diceLeft` what is left of it,
   * `selected` the point chosen and `targets` where its piece may go.
   */
  show(view) {
    this.view = view;
    this.draw();
  }

  /** Where point `x` is drawn: its column's left edge, and whether it hangs from the top. */
  place(x) {
    const { left, width, bar } = this.geometry;
    // Top row, left to right: 13 … 24; bottom row, left to right: 12 … 1; a bar between the halves.
    const top = x >= 13;
    const index = top ? x - 13 : 12 - x;
    return { column: left + index * width + (index >= 6 ? bar : 0), top };
  }

  tray(colour) {
    const geometry = this.geometry;
    const x = geometry.left + 12 * geometry.width + geometry.bar + 8;
    // White bears off at the bottom right (its home is 1 … 6), black at the top right.
    const half = geometry.height / 2 - 8;
    return colour === WHITE ? { x, y: geometry.height / 2, h: half } : { x, y: 8, h: half };
  }

  /** Return the point (or the tray: 0 or 25) at a place on the canvas, or null. */
  pointAt(px, py) {
    if (!this.geometry) return null;
    for (const colour of ["W", "B"]) {
      const { x, y, h } = this.tray(colour);
      if (px >= x && px <= x + this.geometry.tray && py >= y && py <= y + h) return OFF[colour];
    }
    for (let x = 1; x <= 24; x++) {
      const { column, top } = this.place(x);
      const inRow = top ? py < this.geometry.height / 2 : py >= this.geometry.height / 2;
      if (inRow && px >= column && px < column + this.geometry.width) return x;
    }
    return null;
  }

  /** Return the centre of point `x` (or its tray) on the canvas. */
  centre(x) {
    const geometry = this.geometry;
    if (x === 0 || x === 25) {
      const { x: left, y, h } = this.tray(x === 0 ? "W" : "B");
      return [left + geometry.tray / 2, y + h / 2];
    }
    const { column, top } = this.place(x);
    return [column + geometry.width / 2, top ? geometry.height * 0.2 : geometry.height * 0.8];
  }

  draw() {
    const canvas = this.canvas;
    const view = this.view;
    const widthCss = canvas.clientWidth;
    if (!widthCss || !view) return;
    const ratio = window.devicePixelRatio || 1;
    const height = Math.round(widthCss * 0.78);
    canvas.style.height = `${height}px`;
    canvas.width = Math.round(widthCss * ratio);
    canvas.height = Math.round(height * ratio);
    const context = canvas.getContext("2d");
    context.setTransform(ratio, 0, 0, ratio, 0, 0);
    const tray = widthCss * 0.08;
    const bar = widthCss * 0.04;
    const width = (widthCss - tray - bar - 16) / 12;
    this.geometry = { left: 8, width, bar, tray, height, radius: Math.min(width * 0.45, height / 24) };
    context.fillStyle = COLOURS.frame;
    context.fillRect(0, 0, widthCss, height);
    context.fillStyle = COLOURS.felt;
    context.fillRect(8, 8, widthCss - tray - 16, height - 16);
    const targets = view.targets || [];
    for (let x = 1; x <= 24; x++) {
      const { column, top } = this.place(x);
      const base = top ? 8 : height - 8;
      const tip = top ? height * 0.42 : height * 0.58;
      context.fillStyle = x % 2 ? COLOURS.pointA : COLOURS.pointB;
      context.beginPath();
      context.moveTo(column, base);
      context.lineTo(column + width, base);
      context.lineTo(column + width / 2, tip);
      context.closePath();
      context.fill();
      if (targets.includes(x)) {
        context.strokeStyle = COLOURS.target;
        context.lineWidth = 4;
        context.stroke();
      }
      context.fillStyle = "rgba(255, 244, 220, 0.8)";
      context.font = `${Math.max(9, width * 0.28)}px system-ui, sans-serif`;
      context.textAlign = "center";
      context.fillText(String(x), column + width / 2, top ? height * 0.46 : height * 0.56);
      this._stack(context, view.state.points[x], column + width / 2, top, x === view.selected);
    }
    this._trays(context, targets);
    this._dice(context);
  }

  _stack(context, stack, centre, top, selected) {
    const { radius, height } = this.geometry;
    const step = Math.min(radius * 2, (height * 0.4 - radius) / Math.max(1, stack.length - 1));
    stack.forEach(([colour], index) => {
      const y = top ? 8 + radius + index * step : height - 8 - radius - index * step;
      context.beginPath();
      context.arc(centre, y, radius, 0, 2 * Math.PI);
      context.fillStyle = colour === WHITE ? COLOURS.white : COLOURS.black;
      context.fill();
      context.lineWidth = 2;
      context.strokeStyle = colour === WHITE ? COLOURS.whiteEdge : COLOURS.blackEdge;
      context.stroke();
      if (index === 0 && stack.length > 1 && stack[stack.length - 1][0] !== colour) {
        // Pinned: crossed, held under its pinners.
        context.strokeStyle = COLOURS.pinned;
        context.lineWidth = 3;
        context.beginPath();
        context.moveTo(centre - radius * 0.6, y - radius * 0.6);
        context.lineTo(centre + radius * 0.6, y + radius * 0.6);
        context.moveTo(centre + radius * 0.6, y - radius * 0.6);
        context.lineTo(centre - radius * 0.6, y + radius * 0.6);
        context.stroke();
      }
      if (selected && index === stack.length - 1) {
        context.strokeStyle = COLOURS.selected;
        context.lineWidth = 4;
        context.beginPath();
        context.arc(centre, y, radius + 2, 0, 2 * Math.PI);
        context.stroke();
      }
    });
  }

  _trays(context, targets) {
    const geometry = this.geometry;
    for (const colour of ["W", "B"]) {
      const { x, y, h } = this.tray(colour);
      context.fillStyle = "#3b2413";
      context.fillRect(x, y, geometry.tray - 8, h);
      if (targets.includes(OFF[colour])) {
        context.strokeStyle = COLOURS.target;
        context.lineWidth = 4;
        context.strokeRect(x, y, geometry.tray - 8, h);
      }
      const count = this.view.state.off[colour].length;
      for (let index = 0; index < count; index++) {
        context.fillStyle = colour === WHITE ? COLOURS.white : COLOURS.black;
        context.fillRect(x + 4, y + 4 + index * ((h - 8) / 15), geometry.tray - 16, (h - 8) / 15 - 2);
      }
    }
  }

  _dice(context) {
    const { dice, diceLeft } = this.view;
    if (!dice) return;
    const geometry = this.geometry;
    const size = geometry.width * 0.7;
    const left = [...(diceLeft || [])];
    const shown = dice[0] === dice[1] ? [dice[0], dice[0], dice[0], dice[0]] : dice;
    const startX = geometry.left + 6 * geometry.width + geometry.bar + geometry.width * 1.5;
    shown.forEach((value, index) => {
      const used = !left.includes(value);
      if (!used) left.splice(left.indexOf(value), 1);
      const x = startX + index * (size + 8);
      const y = geometry.height / 2 - size / 2;
      context.globalAlpha = used ? 0.35 : 1;
      context.fillStyle = COLOURS.die;
      context.fillRect(x, y, size, size);
      context.fillStyle = "#2b1d12";
      for (const [row, column] of PIPS[value]) {
        context.beginPath();
        context.arc(x + size * (0.2 + 0.3 * column), y + size * (0.2 + 0.3 * row), size * 0.08, 0, 2 * Math.PI);
        context.fill();
      }
      context.globalAlpha = 1;
    });
  }
}
