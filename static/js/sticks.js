// The dice of sticks, drawn on a canvas: four sticks, light and straight on one side, dark and rounded on the
// other. A throw tumbles them, lands them, then shows each stick's side, the value and its name.

import { THROW_NAMES } from "./rules/tab.js";

const TUMBLE_MS = 450; // at least this long in the air, so that a fast server still shows a throw
const LANDING_MS = 750;

const LIGHT = { face: "#f7ebcd", edge: "#c39a5b", grain: "rgba(150, 105, 50, 0.28)" };
const DARK = { face: "#6b3f1f", middle: "#94592c", edge: "#2f1a0b", carving: "rgba(255, 214, 150, 0.35)" };

const easeOutCubic = (t) => 1 - (1 - t) ** 3;

function easeOutBounce(t) {
  const n = 7.5625;
  const d = 2.75;
  if (t < 1 / d) return n * t * t;
  if (t < 2 / d) return n * (t -= 1.5 / d) * t + 0.75;
  if (t < 2.5 / d) return n * (t -= 2.25 / d) * t + 0.9375;
  return n * (t -= 2.625 / d) * t + 0.984375;
}

/** Return the name of a throw's value (Tâb, Itneyn, Teláteh, Arba'ah, Sitteh). */
export function throwName(value) {
  return (THROW_NAMES instanceof Map ? THROW_NAMES.get(value) : THROW_NAMES[value]) ?? String(value);
}

/** Describe a throw in words, for the messages and screen readers. */
export function describeThrow(dice) {
  const light = dice.stickValues.filter(Boolean).length;
  const sides = `${light} light side${light === 1 ? "" : "s"} up`;
  return `${dice.value} (${throwName(dice.value)}, ${sides})${dice.keepPlaying ? ", throws again" : ""}`;
}

export class Sticks {
  /**
   * `onThrow({keyboard})` is called when the player clicks the sticks or presses Space or Enter on them; `caption` is an
   * element that gets the throw in words; `speed()` returns the animation factor (1 normal, 0 no animation).
   */
  constructor(canvas, { onThrow, caption, speed = () => 1 }) {
    this.canvas = canvas;
    this.context = canvas.getContext("2d");
    this.caption = caption;
    this.speed = speed;
    this.onThrow = onThrow;
    this.mode = "idle"; // idle | tumbling | landing | landed
    this.dice = null;
    this.enabled = false;
    this.prompt = "";
    this.sticks = this._freshSticks();
    this.animating = false;
    this.width = 0;
    this.height = 0;

    canvas.addEventListener("click", () => this.onThrow({ keyboard: false }));
    canvas.addEventListener("keydown", (event) => {
      if (event.key === " " || event.key === "Enter") {
        event.preventDefault();
        this.onThrow({ keyboard: true });
      }
    });
    new ResizeObserver(() => this._resize()).observe(canvas);
    this._resize();
  }

  /** Say whether the player may throw now, and what the idle sticks invite to do. */
  setEnabled(enabled, prompt = "") {
    this.enabled = enabled;
    this.prompt = prompt;
    this.canvas.classList.toggle("is-ready", enabled);
    this.canvas.setAttribute("aria-disabled", String(!enabled));
    this._request();
  }

  /** Throw them in the air while the result is on its way. */
  tumble() {
    if (this.mode === "tumbling") return;
    this.mode = "tumbling";
    this.dice = null;
    this.sticks = this._freshSticks();
    this.tumbleStart = performance.now();
    this._setCaption("The sticks are in the air…");
    this._request();
  }

  /** Land the sticks on `dice` ({stickValues, value, keepPlaying}); resolve once they lie still. */
  land(dice) {
    const factor = this.speed();
    if (factor === 0) {
      this.show(dice);
      return Promise.resolve();
    }
    if (this.mode !== "tumbling") this.tumble();
    const waited = performance.now() - this.tumbleStart;
    const delay = Math.max(0, TUMBLE_MS * factor - waited);
    return new Promise((resolve) => {
      setTimeout(() => {
        this.dice = dice;
        this.mode = "landing";
        this.landingStart = performance.now();
        this.landingDuration = LANDING_MS * factor;
        this._landed = resolve;
        this._setCaption(`Thrown: ${describeThrow(dice)}.`);
        this._request();
      }, delay);
    });
  }

  /** Show `dice` at once, without animation (a game rejoined, or animations turned off). */
  show(dice) {
    this.dice = dice;
    this.mode = "landed";
    this.sticks = this._freshSticks();
    this._setCaption(`Thrown: ${describeThrow(dice)}.`);
    this._finishLanding();
    this._request();
  }

  /** Gather the sticks again for the next throw. */
  reset() {
    if (this.mode === "idle") return;
    this._finishLanding();
    this.mode = "idle";
    this.dice = null;
    this._setCaption("");
    this._request();
  }

  _finishLanding() {
    if (this._landed) {
      const resolve = this._landed;
      this._landed = null;
      resolve();
    }
  }

  _setCaption(text) {
    if (this.caption) this.caption.textContent = text;
    this.canvas.setAttribute("aria-label", text ? `Sticks. ${text}` : "Sticks: click or press Space to throw");
  }

  _freshSticks() {
    return Array.from({ length: 4 }, (_, index) => ({
      tilt: (Math.random() - 0.5) * 0.22,
      shift: (Math.random() - 0.5) * 0.25,
      spin: 14 + Math.random() * 10 + index * 1.5,
      phase: Math.random() * Math.PI * 2,
      wobble: 2 + Math.random() * 2,
      hop: 6 + Math.random() * 5,
      turns: 2 + Math.floor(Math.random() * 3),
    }));
  }

  _resize() {
    const ratio = window.devicePixelRatio || 1;
    const width = this.canvas.clientWidth;
    const height = this.canvas.clientHeight;
    if (!width || !height) return;
    this.width = width;
    this.height = height;
    this.canvas.width = Math.round(width * ratio);
    this.canvas.height = Math.round(height * ratio);
    this.context.setTransform(ratio, 0, 0, ratio, 0, 0);
    this._draw(performance.now());
  }

  _request() {
    if (this.animating) return;
    this.animating = true;
    requestAnimationFrame((now) => this._frame(now));
  }

  _frame(now) {
    this.animating = false;
    const keepGoing = this._draw(now);
    if (keepGoing) this._request();
  }

  /** Draw everything; return whether an animation is still running. */
  _draw(now) {
    const ctx = this.context;
    const { width, height } = this;
    if (!width || !height) return false;
    ctx.clearRect(0, 0, width, height);
    const wide = width > height * 1.35;
    // The sticks' area and the label's area: side by side on a wide strip (phones), stacked otherwise.
    const area = wide
      ? { x: 0, y: 0, w: width * 0.55, h: height }
      : { x: 0, y: 0, w: width, h: height * 0.66 };
    const label = wide
      ? { x: width * 0.55, y: 0, w: width * 0.45, h: height }
      : { x: 0, y: height * 0.66, w: width, h: height * 0.34 };

    this._drawMat(ctx, area);
    const length = Math.min(area.h * 0.78, area.w * 0.95);
    const thickness = Math.max(8, Math.min(length / 6.2, area.w / 7));
    const gap = thickness * 1.55;
    const centerX = area.x + area.w / 2;
    const centerY = area.y + area.h / 2;
    let running = false;

    this.sticks.forEach((stick, index) => {
      const light = this.dice ? this.dice.stickValues[index] : index % 2 === 0;
      const restX = centerX + (index - 1.5) * gap + stick.shift * thickness;
      const restAngle = stick.tilt;
      let x = restX;
      let y = centerY;
      let angle = restAngle;
      let roll = light ? 0 : Math.PI; // the rotation about the stick's long axis: 0 shows the light side
      let lift = 0;

      if (this.mode === "idle") {
        x = centerX + (index - 1.5) * thickness * 1.08;
        angle = (index - 1.5) * 0.07;
        roll = index % 2 === 0 ? 0 : Math.PI;
        if (this.enabled && this.speed() > 0) {
          lift = (Math.sin(now / 320 + index * 0.9) + 1) * 1.5;
          running = true;
        }
      } else if (this.mode === "tumbling") {
        const t = (now - this.tumbleStart) / 1000;
        x = centerX + (index - 1.5) * thickness * 1.3 + Math.sin(t * stick.wobble * 3 + stick.phase) * thickness * 0.3;
        lift = Math.abs(Math.sin(t * stick.hop + stick.phase)) * area.h * 0.09;
        angle = Math.sin(t * stick.wobble + stick.phase) * 0.5;
        roll = stick.phase + t * stick.spin;
        running = true;
      } else if (this.mode === "landing") {
        const t = Math.min(1, (now - this.landingStart) / this.landingDuration);
        const settle = easeOutCubic(t);
        const drop = easeOutBounce(t);
        x = centerX + (index - 1.5) * thickness * 1.3 + (restX - (centerX + (index - 1.5) * thickness * 1.3)) * settle;
        lift = (1 - drop) * area.h * 0.22;
        angle = restAngle + (1 - settle) * (stick.phase - Math.PI) * 0.6;
        roll += (1 - settle) * stick.turns * Math.PI * 2;
        if (t < 1) running = true;
        else {
          this.mode = "landed";
          this._finishLanding();
        }
      }
      this._drawStick(ctx, x, y - lift, length, thickness, angle, roll, lift);
    });

    this._drawLabel(ctx, label, now);
    return running;
  }

  _drawMat(ctx, area) {
    const radius = Math.min(area.w, area.h) * 0.42;
    const gradient = ctx.createRadialGradient(
      area.x + area.w / 2,
      area.y + area.h / 2,
      radius * 0.2,
      area.x + area.w / 2,
      area.y + area.h / 2,
      radius * 1.3,
    );
    gradient.addColorStop(0, "rgba(120, 72, 34, 0.16)");
    gradient.addColorStop(1, "rgba(120, 72, 34, 0)");
    ctx.fillStyle = gradient;
    ctx.fillRect(area.x, area.y, area.w, area.h);
  }

  _drawStick(ctx, x, y, length, thickness, angle, roll, lift) {
    const facing = Math.cos(roll);
    const light = facing >= 0;
    const squeeze = Math.max(0.14, Math.abs(facing));
    const w = thickness * squeeze;
    const h = length;

    // The shadow stays on the mat and shrinks as the stick flies.
    ctx.save();
    ctx.translate(x + lift * 0.25, y + lift + thickness * 0.35);
    ctx.rotate(angle);
    ctx.fillStyle = `rgba(40, 20, 5, ${0.22 - Math.min(0.14, lift / 400)})`;
    ctx.beginPath();
    ctx.ellipse(0, 0, thickness * 0.62, h * 0.5, 0, 0, Math.PI * 2);
    ctx.fill();
    ctx.restore();

    ctx.save();
    ctx.translate(x, y);
    ctx.rotate(angle);
    if (light) {
      // The light side is flat and straight: square ends, straight grain.
      const gradient = ctx.createLinearGradient(-w / 2, 0, w / 2, 0);
      gradient.addColorStop(0, "#eedcb0");
      gradient.addColorStop(0.5, LIGHT.face);
      gradient.addColorStop(1, "#e8d3a2");
      ctx.fillStyle = gradient;
      ctx.strokeStyle = LIGHT.edge;
      ctx.lineWidth = 1.2;
      roundedRect(ctx, -w / 2, -h / 2, w, h, Math.min(3, w / 3));
      ctx.fill();
      ctx.stroke();
      if (squeeze > 0.45) {
        ctx.strokeStyle = LIGHT.grain;
        ctx.lineWidth = 1;
        for (const offset of [-0.22, 0.05, 0.28]) {
          ctx.beginPath();
          ctx.moveTo(offset * w, -h / 2 + 5);
          ctx.lineTo(offset * w + 0.6, h / 2 - 5);
          ctx.stroke();
        }
      }
    } else {
      // The dark side is rounded: round ends and a highlight along its curve, with carved chevrons.
      const gradient = ctx.createLinearGradient(-w / 2, 0, w / 2, 0);
      gradient.addColorStop(0, DARK.edge);
      gradient.addColorStop(0.38, DARK.middle);
      gradient.addColorStop(0.55, DARK.face);
      gradient.addColorStop(1, DARK.edge);
      ctx.fillStyle = gradient;
      roundedRect(ctx, -w / 2, -h / 2, w, h, w / 2);
      ctx.fill();
      if (squeeze > 0.45) {
        ctx.strokeStyle = DARK.carving;
        ctx.lineWidth = 1.2;
        const steps = 5;
        for (let step = 0; step < steps; step += 1) {
          const cy = -h / 2 + h * ((step + 1) / (steps + 1));
          ctx.beginPath();
          ctx.moveTo(-w * 0.28, cy - w * 0.18);
          ctx.lineTo(0, cy + w * 0.1);
          ctx.lineTo(w * 0.28, cy - w * 0.18);
          ctx.stroke();
        }
      }
    }
    ctx.restore();
  }

  _drawLabel(ctx, box, now) {
    const cx = box.x + box.w / 2;
    const cy = box.y + box.h / 2;
    ctx.textAlign = "center";
    ctx.textBaseline = "middle";
    if (this.mode === "landed" && this.dice) {
      const big = Math.min(box.h * 0.46, box.w * 0.3, 56);
      ctx.fillStyle = "#3a2414";
      ctx.font = `700 ${big}px Georgia, "Iowan Old Style", serif`;
      ctx.fillText(String(this.dice.value), cx, cy - big * 0.42);
      ctx.font = `italic 600 ${Math.max(13, big * 0.38)}px Georgia, "Iowan Old Style", serif`;
      ctx.fillStyle = "#7a3b1c";
      ctx.fillText(throwName(this.dice.value), cx, cy + big * 0.28);
      if (this.dice.keepPlaying) {
        const text = "throws again";
        ctx.font = `600 ${Math.max(11, big * 0.24)}px system-ui, sans-serif`;
        const textWidth = ctx.measureText(text).width + 16;
        const badgeHeight = Math.max(18, big * 0.36);
        const top = cy + big * 0.62;
        ctx.fillStyle = "#2f7d4a";
        roundedRect(ctx, cx - textWidth / 2, top, textWidth, badgeHeight, badgeHeight / 2);
        ctx.fill();
        ctx.fillStyle = "#fff";
        ctx.fillText(text, cx, top + badgeHeight / 2 + 0.5);
      }
      return;
    }
    if (this.mode === "tumbling" || this.mode === "landing") {
      const dots = ".".repeat(1 + (Math.floor(now / 250) % 3));
      ctx.fillStyle = "#7a5a3c";
      ctx.font = `600 ${Math.min(18, box.h * 0.2)}px system-ui, sans-serif`;
      ctx.fillText(`Throwing${dots}`, cx, cy);
      return;
    }
    if (this.prompt) {
      const size = Math.min(16, Math.max(12, box.h * 0.16));
      ctx.font = `600 ${size}px system-ui, sans-serif`;
      ctx.fillStyle = this.enabled ? "#7a3b1c" : "#8a7560";
      wrapText(ctx, this.prompt, cx, cy, box.w * 0.9, size * 1.3);
    }
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

function wrapText(ctx, text, cx, cy, maxWidth, lineHeight) {
  const lines = [];
  let line = "";
  for (const word of text.split(" ")) {
    const candidate = line ? `${line} ${word}` : word;
    if (ctx.measureText(candidate).width > maxWidth && line) {
      lines.push(line);
      line = word;
    } else {
      line = candidate;
    }
  }
  if (line) lines.push(line);
  const top = cy - ((lines.length - 1) * lineHeight) / 2;
  lines.forEach((entry, index) => ctx.fillText(entry, cx, top + index * lineHeight));
}
