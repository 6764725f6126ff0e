// The board, drawn on a canvas from the game's data: 4 rows of `size` cells numbered as the API's `pieces`
// array (a snake from the initial player's bottom left), seen from the side of the player at the bottom.

import { BLUE } from "./rules/tab.js";

const MAX_CELL = 92;
const MOVE_MS = 380;
const BURST_MS = 520;

// Each player's two colours: the body of the piece, and the marks that tell its state.
const PALETTE = {
  Blue: { light: "#6f9bf2", body: "#2b5cc4", dark: "#173a87", rim: "#0d2559", mark: "#f5eedb" },
  Red: { light: "#ef7b62", body: "#c23a27", dark: "#84210f", rim: "#531207", mark: "#f7c948" },
};

const easeInOut = (t) => (t < 0.5 ? 2 * t * t : 1 - (-2 * t + 2) ** 2 / 2);

export class Board {
  /**
   * `onActivate(cell)` is called when the player clicks a cell or presses Enter or Space on the keyboard
   * cursor; `onCursor(cell)` when the keyboard cursor moves; `speed()` returns the animation factor.
   */
  constructor(canvas, { onActivate, onCursor = () => {}, speed = () => 1 }) {
    this.canvas = canvas;
    this.context = canvas.getContext("2d");
    this.onActivate = onActivate;
    this.onCursor = onCursor;
    this.speed = speed;
    this.view = null;
    this.cursor = { row: 3, col: 0 };
    this.hover = null;
    this.focused = false;
    this.animation = null;
    this.bursts = [];
    this.animating = false;
    this.cell = 40;
    this.grain = null;

    canvas.addEventListener("click", (event) => this._click(event));
    canvas.addEventListener("mousemove", (event) => this._hover(event));
    canvas.addEventListener("mouseleave", () => {
      this.hover = null;
      this._request();
    });
    canvas.addEventListener("keydown", (event) => this._key(event));
    canvas.addEventListener("focus", () => {
      // The cursor is for the keyboard: a click that focuses the board does not show it.
      this.focused = canvas.matches(":focus-visible");
      this._announceCursor();
      this._request();
    });
    canvas.addEventListener("blur", () => {
      this.focused = false;
      this._request();
    });
    this.resizeObserver = new ResizeObserver(() => this.resize());
    this.resizeObserver.observe(canvas.parentElement);
    window.addEventListener("resize", () => this.resize());
  }

  /**
   * Show a position. `view`: {size, pieces, bottom (the colour drawn at the bottom), movable (Set of cells
   * whose piece can move), destinations (Set), selected (cell or null), lastMove ({from, to} or null),
   * interactive (whether clicks are expected now)}.
   */
  setView(view) {
    const resized = !this.view || this.view.size !== view.size || this.view.bottom !== view.bottom;
    this.view = view;
    if (resized) {
      this.cursor = { row: 3, col: 0 };
      this.resize();
    }
    // Draw at once, so that the canvas always shows the data it was given; animations go on frame by frame.
    if (this._draw(performance.now())) this._request();
  }

  /** Animate the move just shown by setView: the piece travels from `from` to `to`, capturing `captured`. */
  animateMove({ from, to, piece, captured }) {
    const factor = this.speed();
    if (factor === 0 || !this.view) return Promise.resolve();
    this._finishAnimation();
    return new Promise((resolve) => {
      this.animation = {
        from,
        to,
        piece,
        captured,
        start: performance.now(),
        duration: MOVE_MS * factor,
        burst: BURST_MS * factor,
        resolve,
      };
      this._request();
    });
  }

  _finishAnimation() {
    if (this.animation) {
      const { resolve } = this.animation;
      this.animation = null;
      resolve();
    }
  }

  // Geometry -------------------------------------------------------------------------------------------

  /** Return the row (0 at the top) and column (0 at the left) where `cell` is drawn. */
  displayPosition(cell) {
    const n = this.view.size;
    const row = Math.floor(cell / n);
    const offset = cell % n;
    // Rows 0 and 2 run left to right from the initial player's side, rows 1 and 3 right to left.
    const column = row % 2 === 0 ? offset : n - 1 - offset;
    return this.view.bottom === BLUE ? { row: 3 - row, col: column } : { row, col: n - 1 - column };
  }

  /** Return the cell drawn at display row `row` and column `col`. */
  cellAtDisplay(row, col) {
    const n = this.view.size;
    const boardRow = this.view.bottom === BLUE ? 3 - row : row;
    const column = this.view.bottom === BLUE ? col : n - 1 - col;
    const offset = boardRow % 2 === 0 ? column : n - 1 - column;
    return boardRow * n + offset;
  }

  /** Return the rectangle of `cell` in CSS pixels, relative to the canvas. */
  cellRect(cell) {
    const { row, col } = this.displayPosition(cell);
    return { x: this.originX + col * this.cell, y: this.originY + row * this.cell, w: this.cell, h: this.cell };
  }

  /** Return the centre of `cell` in the page's viewport coordinates (what a click needs). */
  cellCenterOnPage(cell) {
    const box = this.canvas.getBoundingClientRect();
    const rect = this.cellRect(cell);
    return { x: box.left + rect.x + rect.w / 2, y: box.top + rect.y + rect.h / 2 };
  }

  /** Return the cell under a point in CSS pixels relative to the canvas, or null outside the cells. */
  cellAt(x, y) {
    if (!this.view) return null;
    const col = Math.floor((x - this.originX) / this.cell);
    const row = Math.floor((y - this.originY) / this.cell);
    if (row < 0 || row > 3 || col < 0 || col >= this.view.size) return null;
    return this.cellAtDisplay(row, col);
  }

  /** Fit the board to the width of its container and to the window's height. */
  resize() {
    if (!this.view) return;
    const n = this.view.size;
    const parent = this.canvas.parentElement;
    const available = parent.clientWidth;
    if (!available) return;
    const heightLimit = Math.max(200, window.innerHeight * 0.62);
    const margin = 0.9; // the frame around the cells, in cells: 0.45 on each side
    const cell = Math.floor(Math.min(MAX_CELL, available / (n + margin), heightLimit / (4 + margin)));
    const width = Math.round(cell * (n + margin));
    const height = Math.round(cell * (4 + margin));
    const ratio = window.devicePixelRatio || 1;
    if (width === this.width && height === this.height && this.canvas.width === Math.round(width * ratio)) {
      this._request();
      return;
    }
    this.cell = cell;
    this.width = width;
    this.height = height;
    this.originX = (this.width - cell * n) / 2;
    this.originY = (this.height - cell * 4) / 2;
    this.canvas.style.width = `${this.width}px`;
    this.canvas.style.height = `${this.height}px`;
    this.canvas.width = Math.round(this.width * ratio);
    this.canvas.height = Math.round(this.height * ratio);
    this.context.setTransform(ratio, 0, 0, ratio, 0, 0);
    this.grain = null;
    this._draw(performance.now());
  }

  // Interaction ----------------------------------------------------------------------------------------

  _point(event) {
    const box = this.canvas.getBoundingClientRect();
    return { x: event.clientX - box.left, y: event.clientY - box.top };
  }

  _click(event) {
    if (!this.view) return;
    const { x, y } = this._point(event);
    const cell = this.cellAt(x, y);
    if (cell === null) return;
    this.cursor = this.displayPosition(cell);
    this.onActivate(cell, { keyboard: false });
  }

  _hover(event) {
    if (!this.view) return;
    const { x, y } = this._point(event);
    const cell = this.cellAt(x, y);
    if (cell !== this.hover) {
      this.hover = cell;
      const { movable, destinations, selected, interactive } = this.view;
      const actionable =
        interactive && cell !== null && (movable.has(cell) || destinations.has(cell) || cell === selected);
      this.canvas.style.cursor = actionable ? "pointer" : "default";
      this._request();
    }
  }

  _key(event) {
    if (!this.view) return;
    this.focused = true;
    const n = this.view.size;
    const moves = {
      ArrowLeft: [0, -1],
      ArrowRight: [0, 1],
      ArrowUp: [-1, 0],
      ArrowDown: [1, 0],
    };
    if (event.key in moves) {
      const [dr, dc] = moves[event.key];
      this.cursor = {
        row: Math.min(3, Math.max(0, this.cursor.row + dr)),
        col: Math.min(n - 1, Math.max(0, this.cursor.col + dc)),
      };
    } else if (event.key === "Home") {
      this.cursor = { ...this.cursor, col: 0 };
    } else if (event.key === "End") {
      this.cursor = { ...this.cursor, col: n - 1 };
    } else if (event.key === "Enter" || event.key === " ") {
      event.preventDefault();
      this.onActivate(this.cellAtDisplay(this.cursor.row, this.cursor.col), { keyboard: true });
      return;
    } else {
      return;
    }
    event.preventDefault();
    this._announceCursor();
    this._request();
  }

  /** Put the keyboard cursor on `cell` (for instance on the first piece that can move). */
  moveCursorTo(cell) {
    if (!this.view || cell === null || cell === undefined) return;
    this.cursor = this.displayPosition(cell);
    if (this.focused) this._announceCursor();
    this._request();
  }

  /** Return the cell under the keyboard cursor. */
  cursorCell() {
    return this.view ? this.cellAtDisplay(this.cursor.row, this.cursor.col) : null;
  }

  _announceCursor() {
    if (this.view) this.onCursor(this.cursorCell(), this.cursor);
  }

  // Drawing --------------------------------------------------------------------------------------------

  _request() {
    if (this.animating) return;
    this.animating = true;
    requestAnimationFrame((now) => {
      this.animating = false;
      if (this._draw(now)) this._request();
    });
  }

  /** Draw the whole board; return whether something is still moving. */
  _draw(now) {
    const ctx = this.context;
    const view = this.view;
    if (!view || !this.width) return false;
    const { cell } = this;
    const n = view.size;
    const pulse = this.speed() > 0 && view.interactive ? (Math.sin(now / 260) + 1) / 2 : 0.6;
    let running = this.speed() > 0 && view.interactive && (view.movable.size > 0 || view.destinations.size > 0);

    ctx.clearRect(0, 0, this.width, this.height);
    this._drawFrame(ctx);

    for (let row = 0; row < 4; row += 1) {
      for (let col = 0; col < n; col += 1) {
        this._drawCell(ctx, this.cellAtDisplay(row, col), row, col);
      }
    }
    this._drawTurns(ctx);

    if (view.lastMove) this._drawLastMove(ctx, view.lastMove);

    // Where the chosen piece may go (the fork), and where any piece would land.
    for (const destination of view.destinations) this._drawDestination(ctx, destination, pulse);

    const animation = this.animation;
    let progress = 1;
    if (animation) {
      progress = Math.min(1, (now - animation.start) / Math.max(1, animation.duration));
      running = true;
    }

    view.pieces.forEach((piece, index) => {
      if (!piece) return;
      if (animation && index === animation.to && progress < 1) return;
      const rect = this.cellRect(index);
      this._drawPiece(ctx, rect.x + cell / 2, rect.y + cell / 2, piece, 1);
      if (view.movable.has(index) && view.interactive) this._drawHalo(ctx, index, pulse, index === view.selected);
    });
    if (view.selected !== null && view.selected !== undefined && view.pieces[view.selected]) {
      this._drawHalo(ctx, view.selected, pulse, true);
    }

    if (animation) {
      const from = this.cellRect(animation.from);
      const to = this.cellRect(animation.to);
      if (animation.captured && progress < 1) {
        this._drawPiece(ctx, to.x + cell / 2, to.y + cell / 2, animation.captured, 1);
      }
      if (progress < 1) {
        const t = easeInOut(progress);
        const x = from.x + (to.x - from.x) * t + cell / 2;
        const y = from.y + (to.y - from.y) * t + cell / 2 - Math.sin(Math.PI * progress) * cell * 0.45;
        this._drawPiece(ctx, x, y, animation.piece, 1 + Math.sin(Math.PI * progress) * 0.18, true);
      } else {
        if (animation.captured) {
          this.bursts.push({ cell: animation.to, start: now, duration: animation.burst, color: animation.captured.color });
        }
        this._finishAnimation();
      }
    }

    this.bursts = this.bursts.filter((burst) => now - burst.start < burst.duration);
    for (const burst of this.bursts) {
      this._drawBurst(ctx, burst, (now - burst.start) / burst.duration);
      running = true;
    }

    if (this.focused) this._drawCursor(ctx);
    return running;
  }

  _woodGrain() {
    // The frame's wood grain, drawn once per size into an offscreen canvas (same pattern on every redraw).
    if (this.grain) return this.grain;
    const ratio = window.devicePixelRatio || 1;
    const grain = document.createElement("canvas");
    grain.width = Math.round(this.width * ratio);
    grain.height = Math.round(this.height * ratio);
    const g = grain.getContext("2d");
    g.scale(ratio, ratio);
    let seed = 7;
    const random = () => {
      seed = (seed * 16807) % 2147483647;
      return seed / 2147483647;
    };
    for (let line = 0; line < this.height / 3; line += 1) {
      const y = (line / (this.height / 3)) * this.height;
      g.strokeStyle = `rgba(70, 38, 14, ${0.04 + random() * 0.07})`;
      g.lineWidth = 0.6 + random() * 1.4;
      g.beginPath();
      const amplitude = 1 + random() * 3;
      const frequency = 0.004 + random() * 0.01;
      const phase = random() * 10;
      for (let x = 0; x <= this.width; x += 8) {
        const yy = y + Math.sin(x * frequency + phase) * amplitude;
        if (x === 0) g.moveTo(x, yy);
        else g.lineTo(x, yy);
      }
      g.stroke();
    }
    this.grain = grain;
    return grain;
  }

  _drawFrame(ctx) {
    const { width, height, cell } = this;
    const radius = cell * 0.28;
    const wood = ctx.createLinearGradient(0, 0, width, height);
    wood.addColorStop(0, "#a8703d");
    wood.addColorStop(0.5, "#8d5a2d");
    wood.addColorStop(1, "#754821");
    ctx.fillStyle = wood;
    roundedRect(ctx, 0, 0, width, height, radius);
    ctx.fill();
    ctx.save();
    roundedRect(ctx, 0, 0, width, height, radius);
    ctx.clip();
    ctx.drawImage(this._woodGrain(), 0, 0, width, height);
    ctx.restore();
    ctx.strokeStyle = "rgba(40, 20, 6, 0.55)";
    ctx.lineWidth = 2;
    roundedRect(ctx, 1, 1, width - 2, height - 2, radius);
    ctx.stroke();

    // The playing field, a lighter inlay.
    const inset = cell * 0.12;
    const field = ctx.createLinearGradient(0, this.originY, 0, this.originY + cell * 4);
    field.addColorStop(0, "#e2b77b");
    field.addColorStop(1, "#d3a265");
    ctx.fillStyle = field;
    roundedRect(
      ctx,
      this.originX - inset,
      this.originY - inset,
      cell * this.view.size + inset * 2,
      cell * 4 + inset * 2,
      cell * 0.16,
    );
    ctx.fill();
    ctx.save();
    ctx.globalAlpha = 0.55;
    ctx.drawImage(this._woodGrain(), 0, 0, width, height);
    ctx.restore();
  }

  _drawCell(ctx, index, row, col) {
    const { cell } = this;
    const view = this.view;
    const x = this.originX + col * cell;
    const y = this.originY + row * cell;
    const pad = cell * 0.06;
    // The two home rows carry a tint of their owner's colour.
    let tint = "rgba(255, 240, 210, 0.22)";
    if (row === 3) tint = view.bottom === BLUE ? "rgba(60, 100, 200, 0.13)" : "rgba(200, 60, 40, 0.13)";
    if (row === 0) tint = view.bottom === BLUE ? "rgba(200, 60, 40, 0.13)" : "rgba(60, 100, 200, 0.13)";
    ctx.fillStyle = tint;
    roundedRect(ctx, x + pad, y + pad, cell - pad * 2, cell - pad * 2, cell * 0.12);
    ctx.fill();
    // Carved edges: darker at the top left, lighter at the bottom right.
    ctx.lineWidth = Math.max(1, cell * 0.03);
    ctx.strokeStyle = "rgba(90, 50, 20, 0.45)";
    ctx.beginPath();
    ctx.moveTo(x + pad, y + cell - pad * 2);
    ctx.lineTo(x + pad, y + pad + cell * 0.1);
    ctx.quadraticCurveTo(x + pad, y + pad, x + pad + cell * 0.1, y + pad);
    ctx.lineTo(x + cell - pad * 2, y + pad);
    ctx.stroke();
    ctx.strokeStyle = "rgba(255, 236, 200, 0.5)";
    ctx.beginPath();
    ctx.moveTo(x + cell - pad, y + pad * 2);
    ctx.lineTo(x + cell - pad, y + cell - pad - cell * 0.1);
    ctx.quadraticCurveTo(x + cell - pad, y + cell - pad, x + cell - pad - cell * 0.1, y + cell - pad);
    ctx.lineTo(x + pad * 2, y + cell - pad);
    ctx.stroke();

    if (index === this.hover && view.interactive) {
      ctx.fillStyle = "rgba(255, 250, 230, 0.28)";
      roundedRect(ctx, x + pad, y + pad, cell - pad * 2, cell - pad * 2, cell * 0.12);
      ctx.fill();
    }

    // A faint chevron tells which way pieces travel along this row.
    if (!view.pieces[index]) {
      const direction = this._rowDirection(row);
      const cx = x + cell / 2;
      const cy = y + cell / 2;
      const s = cell * 0.09;
      ctx.strokeStyle = "rgba(90, 50, 20, 0.28)";
      ctx.lineWidth = Math.max(1, cell * 0.035);
      ctx.lineCap = "round";
      ctx.beginPath();
      ctx.moveTo(cx - s * direction, cy - s * 1.3);
      ctx.lineTo(cx + s * direction, cy);
      ctx.lineTo(cx - s * direction, cy + s * 1.3);
      ctx.stroke();
      ctx.lineCap = "butt";
    }
  }

  /** Return +1 when pieces travel rightwards along display row `row`, -1 when leftwards. */
  _rowDirection(row) {
    const boardRow = this.view.bottom === BLUE ? 3 - row : row;
    return (boardRow % 2 === 0 ? 1 : -1) * (this.view.bottom === BLUE ? 1 : -1);
  }

  /** Draw, in the frame, how the bottom player's path turns from row to row (and the fork). */
  _drawTurns(ctx) {
    const { cell } = this;
    const color = PALETTE[this.view.bottom].body;
    const left = this.originX - cell * 0.24;
    const right = this.originX + cell * this.view.size + cell * 0.24;
    const rowY = (row) => this.originY + row * cell + cell / 2;
    ctx.save();
    ctx.globalAlpha = 0.7;
    // Display rows from the top: 3 is the player's home row. Up from 3 to 2 at the right, 2 to 1 at the left,
    // 1 to 0 at the right (into the opponent's row) or back down to 2 (the fork); 0 back to 1 at the left.
    this._turnArrow(ctx, right, rowY(3), rowY(2), 1, color);
    this._turnArrow(ctx, left, rowY(2), rowY(1), -1, color);
    this._turnArrow(ctx, right, rowY(1), rowY(0), 1, color);
    this._turnArrow(ctx, right + cell * 0.12, rowY(1), rowY(2), 1, color, true);
    this._turnArrow(ctx, left, rowY(0), rowY(1), -1, color);
    ctx.restore();
  }

  _turnArrow(ctx, x, fromY, toY, side, color, dashed = false) {
    const { cell } = this;
    const bulge = cell * 0.13 * side;
    const startY = fromY + (toY > fromY ? cell * 0.12 : -cell * 0.12);
    const endY = toY + (toY > fromY ? -cell * 0.18 : cell * 0.18);
    ctx.strokeStyle = color;
    ctx.fillStyle = color;
    ctx.lineWidth = Math.max(1.2, cell * 0.035);
    ctx.setLineDash(dashed ? [cell * 0.06, cell * 0.06] : []);
    ctx.beginPath();
    ctx.moveTo(x - bulge * 0.4, startY);
    ctx.quadraticCurveTo(x + bulge, (startY + endY) / 2, x - bulge * 0.4, endY);
    ctx.stroke();
    ctx.setLineDash([]);
    const head = cell * 0.08;
    const dir = toY > fromY ? 1 : -1;
    ctx.beginPath();
    ctx.moveTo(x - bulge * 0.4, endY + dir * head);
    ctx.lineTo(x - bulge * 0.4 - head * 0.8, endY - dir * head * 0.2);
    ctx.lineTo(x - bulge * 0.4 + head * 0.8, endY - dir * head * 0.2);
    ctx.closePath();
    ctx.fill();
  }

  _drawPiece(ctx, x, y, piece, scale = 1, lifted = false) {
    const { cell } = this;
    const colors = PALETTE[piece.color] ?? PALETTE.Blue;
    const radius = cell * 0.36 * scale;
    ctx.save();
    // Shadow.
    ctx.fillStyle = lifted ? "rgba(30, 15, 5, 0.25)" : "rgba(30, 15, 5, 0.32)";
    ctx.beginPath();
    ctx.ellipse(x + cell * 0.04, y + cell * (lifted ? 0.14 : 0.06), radius * 0.98, radius * 0.9, 0, 0, Math.PI * 2);
    ctx.fill();

    // A piece that has never moved is shown faded; the others are solid.
    const fresh = !piece.inMotion;
    ctx.globalAlpha = fresh ? 0.62 : 1;
    const body = ctx.createRadialGradient(x - radius * 0.35, y - radius * 0.4, radius * 0.1, x, y, radius);
    body.addColorStop(0, colors.light);
    body.addColorStop(0.55, colors.body);
    body.addColorStop(1, colors.dark);
    ctx.fillStyle = body;
    ctx.beginPath();
    ctx.arc(x, y, radius, 0, Math.PI * 2);
    ctx.fill();
    ctx.globalAlpha = 1;
    ctx.lineWidth = Math.max(1.5, cell * 0.04);
    ctx.strokeStyle = colors.rim;
    ctx.setLineDash(fresh ? [cell * 0.07, cell * 0.05] : []);
    ctx.beginPath();
    ctx.arc(x, y, radius - ctx.lineWidth / 2, 0, Math.PI * 2);
    ctx.stroke();
    ctx.setLineDash([]);

    if (piece.inMotion) {
      // Moving: a ring in the player's second colour.
      ctx.strokeStyle = colors.mark;
      ctx.lineWidth = Math.max(1.5, cell * 0.045);
      ctx.beginPath();
      ctx.arc(x, y, radius * 0.53, 0, Math.PI * 2);
      ctx.stroke();
    }
    if (piece.reachedLastRow) {
      // Has been in the last row: a star inside the ring.
      ctx.fillStyle = colors.mark;
      star(ctx, x, y, radius * 0.34, radius * 0.15, 5);
      ctx.fill();
    }
    ctx.restore();
  }

  _drawHalo(ctx, index, pulse, strong) {
    const rect = this.cellRect(index);
    const { cell } = this;
    const x = rect.x + cell / 2;
    const y = rect.y + cell / 2;
    ctx.save();
    ctx.strokeStyle = strong ? "#fff6d8" : `rgba(255, 214, 80, ${0.65 + pulse * 0.35})`;
    ctx.lineWidth = Math.max(2, cell * (strong ? 0.07 : 0.055));
    ctx.shadowColor = "rgba(255, 200, 60, 0.9)";
    ctx.shadowBlur = cell * (0.12 + pulse * 0.12);
    ctx.beginPath();
    ctx.arc(x, y, cell * 0.43, 0, Math.PI * 2);
    ctx.stroke();
    if (strong) {
      ctx.strokeStyle = "#e0a100";
      ctx.lineWidth = Math.max(1, cell * 0.025);
      ctx.beginPath();
      ctx.arc(x, y, cell * 0.47, 0, Math.PI * 2);
      ctx.stroke();
    }
    ctx.restore();
  }

  _drawDestination(ctx, index, pulse) {
    const rect = this.cellRect(index);
    const { cell } = this;
    const x = rect.x + cell / 2;
    const y = rect.y + cell / 2;
    ctx.save();
    if (this.view.pieces[index]) {
      // A capture: a target around the opponent's piece.
      ctx.strokeStyle = "#b3121f";
      ctx.lineWidth = Math.max(2, cell * 0.05);
      ctx.setLineDash([cell * 0.09, cell * 0.05]);
      ctx.beginPath();
      ctx.arc(x, y, cell * 0.45, 0, Math.PI * 2);
      ctx.stroke();
      ctx.setLineDash([]);
      for (const angle of [0, Math.PI / 2, Math.PI, (3 * Math.PI) / 2]) {
        ctx.beginPath();
        ctx.moveTo(x + Math.cos(angle) * cell * 0.38, y + Math.sin(angle) * cell * 0.38);
        ctx.lineTo(x + Math.cos(angle) * cell * 0.5, y + Math.sin(angle) * cell * 0.5);
        ctx.stroke();
      }
    } else {
      ctx.fillStyle = `rgba(38, 140, 80, ${0.35 + pulse * 0.25})`;
      ctx.beginPath();
      ctx.arc(x, y, cell * 0.3, 0, Math.PI * 2);
      ctx.fill();
      ctx.fillStyle = "#f3fff6";
      ctx.beginPath();
      ctx.arc(x, y, cell * 0.09, 0, Math.PI * 2);
      ctx.fill();
      ctx.strokeStyle = "#1d6b3d";
      ctx.lineWidth = Math.max(1.5, cell * 0.035);
      ctx.beginPath();
      ctx.arc(x, y, cell * 0.3, 0, Math.PI * 2);
      ctx.stroke();
    }
    ctx.restore();
  }

  _drawLastMove(ctx, { from, to }) {
    const { cell } = this;
    const a = this.cellRect(from);
    const b = this.cellRect(to);
    const ax = a.x + cell / 2;
    const ay = a.y + cell / 2;
    const bx = b.x + cell / 2;
    const by = b.y + cell / 2;
    ctx.save();
    // Where the piece came from: a footprint.
    ctx.strokeStyle = "rgba(120, 60, 10, 0.7)";
    ctx.lineWidth = Math.max(1.2, cell * 0.03);
    ctx.setLineDash([cell * 0.05, cell * 0.05]);
    ctx.beginPath();
    ctx.arc(ax, ay, cell * 0.3, 0, Math.PI * 2);
    ctx.stroke();
    ctx.setLineDash([]);
    // Where it went: a frame around the cell.
    ctx.strokeStyle = "rgba(255, 170, 40, 0.95)";
    ctx.lineWidth = Math.max(2, cell * 0.05);
    roundedRect(ctx, b.x + cell * 0.05, b.y + cell * 0.05, cell * 0.9, cell * 0.9, cell * 0.14);
    ctx.stroke();
    // And the way between them.
    const mx = (ax + bx) / 2 + (ay === by ? 0 : (by > ay ? 1 : -1) * cell * 0.25);
    const my = (ay + by) / 2 - (ay === by ? cell * 0.35 : 0);
    ctx.strokeStyle = "rgba(120, 60, 10, 0.45)";
    ctx.lineWidth = Math.max(1.5, cell * 0.04);
    ctx.beginPath();
    ctx.moveTo(ax, ay);
    ctx.quadraticCurveTo(mx, my, bx, by);
    ctx.stroke();
    ctx.restore();
  }

  _drawBurst(ctx, burst, t) {
    const rect = this.cellRect(burst.cell);
    const { cell } = this;
    const x = rect.x + cell / 2;
    const y = rect.y + cell / 2;
    const colors = PALETTE[burst.color] ?? PALETTE.Red;
    ctx.save();
    ctx.globalAlpha = 1 - t;
    ctx.strokeStyle = colors.body;
    ctx.lineWidth = cell * 0.08 * (1 - t) + 1;
    ctx.beginPath();
    ctx.arc(x, y, cell * (0.3 + t * 0.5), 0, Math.PI * 2);
    ctx.stroke();
    ctx.fillStyle = colors.mark;
    for (let spark = 0; spark < 8; spark += 1) {
      const angle = (spark / 8) * Math.PI * 2 + 0.3;
      const distance = cell * (0.25 + t * 0.6);
      ctx.beginPath();
      ctx.arc(x + Math.cos(angle) * distance, y + Math.sin(angle) * distance, cell * 0.05 * (1 - t) + 0.5, 0, Math.PI * 2);
      ctx.fill();
    }
    ctx.restore();
  }

  _drawCursor(ctx) {
    const { cell } = this;
    const x = this.originX + this.cursor.col * cell;
    const y = this.originY + this.cursor.row * cell;
    ctx.save();
    ctx.strokeStyle = "#1b1208";
    ctx.lineWidth = 5;
    roundedRect(ctx, x + 2, y + 2, cell - 4, cell - 4, cell * 0.14);
    ctx.stroke();
    ctx.strokeStyle = "#ffe27a";
    ctx.lineWidth = 2.5;
    ctx.stroke();
    ctx.restore();
  }
}

function roundedRect(ctx, x, y, w, h, r) {
  const radius = Math.max(0, Math.min(r, w / 2, h / 2));
  ctx.beginPath();
  ctx.moveTo(x + radius, y);
  ctx.arcTo(x + w, y, x + w, y + h, radius);
  ctx.arcTo(x + w, y + h, x, y + h, radius);
  ctx.arcTo(x, y + h, x, y, radius);
  ctx.arcTo(x, y, x + w, y, radius);
  ctx.closePath();
}

function star(ctx, x, y, outer, inner, points) {
  ctx.beginPath();
  for (let i = 0; i < points * 2; i += 1) {
    const radius = i % 2 === 0 ? outer : inner;
    const angle = (i * Math.PI) / points - Math.PI / 2;
    const px = x + Math.cos(angle) * radius;
    const py = y + Math.sin(angle) * radius;
    if (i === 0) ctx.moveTo(px, py);
    else ctx.lineTo(px, py);
  }
  ctx.closePath();
}
