// The Fish board on a canvas: 10 rows of 4 flat-topped hexagonal ice tiles in the zig-zag layout of the protocol
// (each odd row half a row lower and half a step to the right), the fish on each tile, the penguins in their players'
// colours, and what the page marks: tiles a click may choose, the penguin chosen, the tile that just sank.

import { COLUMNS, ROWS } from "../rules/fish.js";

const PENGUIN = { red: "#d64541", white: "#f7f9fb", brown: "#8a5a35", black: "#1f2429" };
const INK = { red: "#fff", white: "#1f2429", brown: "#fff", black: "#fff" };
const SQRT3 = Math.sqrt(3);

export class FishBoard {
  constructor(canvas) {
    this.canvas = canvas;
    this.context = canvas.getContext("2d");
    this.view = null;
    this.resize();
    new ResizeObserver(() => this.resize()).observe(canvas);
  }

  resize() {
    const ratio = window.devicePixelRatio || 1;
    const width = this.canvas.clientWidth || 500;
    // Width 12.5 radii, height 11 half-heights of a tile.
    this.radius = width / 12.5;
    const height = Math.round((SQRT3 / 2) * this.radius * 11);
    this.canvas.style.height = `${height}px`;
    this.canvas.width = Math.round(width * ratio);
    this.canvas.height = Math.round(height * ratio);
    this.context.setTransform(ratio, 0, 0, ratio, 0, 0);
    if (this.view) this.show(this.view);
  }

  centre(row, col) {
    const r = this.radius;
    return [r + col * 3 * r + (row % 2) * 1.5 * r, (SQRT3 / 2) * r * (row + 1)];
  }

  /** Return the tile under a point of the canvas (CSS pixels), or null. */
  tileAt(x, y) {
    let best = null;
    let nearest = Infinity;
    for (let row = 0; row < ROWS; row += 1) {
      for (let col = 0; col < COLUMNS; col += 1) {
        const [cx, cy] = this.centre(row, col);
        const distance = Math.hypot(x - cx, y - cy);
        if (distance < nearest) [best, nearest] = [[row, col], distance];
      }
    }
    return nearest <= this.radius * 0.95 ? best : null;
  }

  hexagon(cx, cy, r) {
    const c = this.context;
    c.beginPath();
    for (let corner = 0; corner < 6; corner += 1) {
      const angle = (Math.PI / 3) * corner;
      c.lineTo(cx + r * Math.cos(angle), cy + r * Math.sin(angle));
    }
    c.closePath();
  }

  /** Draw `view`: {board, players: [{color, places}], targets: [[row, col]], chosen: [row, col], sunk: [row, col]}. */
  show(view) {
    this.view = view;
    const c = this.context;
    const r = this.radius;
    c.clearRect(0, 0, this.canvas.width, this.canvas.height);
    const targets = new Set((view.targets || []).map(([row, col]) => `${row},${col}`));
    for (let row = 0; row < ROWS; row += 1) {
      for (let col = 0; col < COLUMNS; col += 1) {
        const [cx, cy] = this.centre(row, col);
        const fish = view.board[row][col];
        this.hexagon(cx, cy, r * 0.94);
        if (fish === 0) {
          c.fillStyle = "rgba(28, 78, 128, 0.18)";
          c.fill();
          if (view.sunk && view.sunk[0] === row && view.sunk[1] === col) {
            c.strokeStyle = "#1c4e80";
            c.setLineDash([4, 4]);
            c.lineWidth = 2;
            c.stroke();
            c.setLineDash([]);
          }
          continue;
        }
        c.fillStyle = targets.has(`${row},${col}`) ? "#fff4c2" : "#e8f4fb";
        c.fill();
        c.strokeStyle = targets.has(`${row},${col}`) ? "#d4a000" : "#9cc3da";
        c.lineWidth = targets.has(`${row},${col}`) ? 3 : 1.5;
        c.stroke();
        this.fish(cx, cy, fish);
      }
    }
    for (const player of view.players) {
      for (const { row, col } of player.places) this.penguin(row, col, player.color, view.chosen);
    }
  }

  fish(cx, cy, count) {
    const c = this.context;
    const r = this.radius;
    // Small fish in a ring (the count also as a number, for whoever cannot count them at a glance).
    c.fillStyle = "#f08a24";
    for (let index = 0; index < count; index += 1) {
      const angle = (2 * Math.PI * index) / count - Math.PI / 2;
      const [x, y] = count === 1 ? [cx, cy - r * 0.35] : [cx + Math.cos(angle) * r * 0.45, cy + Math.sin(angle) * r * 0.45];
      c.beginPath();
      c.ellipse(x, y, r * 0.13, r * 0.07, 0, 0, 2 * Math.PI);
      c.moveTo(x + r * 0.12, y);
      c.lineTo(x + r * 0.22, y - r * 0.07);
      c.lineTo(x + r * 0.22, y + r * 0.07);
      c.fill();
    }
    c.fillStyle = "#1c4e80";
    c.font = `600 ${Math.round(r * 0.32)}px system-ui, sans-serif`;
    c.textAlign = "center";
    c.textBaseline = "middle";
    c.fillText(String(count), cx, cy + (count === 1 ? r * 0.2 : 0));
  }

  penguin(row, col, colour, chosen) {
    const c = this.context;
    const r = this.radius;
    const [cx, cy] = this.centre(row, col);
    c.beginPath();
    c.arc(cx, cy, r * 0.5, 0, 2 * Math.PI);
    c.fillStyle = PENGUIN[colour];
    c.fill();
    const picked = chosen && chosen[0] === row && chosen[1] === col;
    c.lineWidth = picked ? 4 : 2;
    c.strokeStyle = picked ? "#d4a000" : "#1f2429";
    c.stroke();
    c.fillStyle = INK[colour];
    c.font = `700 ${Math.round(r * 0.42)}px system-ui, sans-serif`;
    c.textAlign = "center";
    c.textBaseline = "middle";
    c.fillText(colour[0].toUpperCase(), cx, cy + 1);
  }
}
