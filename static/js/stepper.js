// A game page's replay controls (start, back, forward, end, the slider, the arrow keys) over a list of positions:
// `show(position, index)` draws one; each position's `caption` is said under the board. The pages of draughts,
// Plakoto and Fish share it; the last position is shown first. It returns `go(index)`, which shows another.

export function stepThrough(positions, show) {
  const $ = (id) => document.getElementById(id);
  const last = positions.length - 1;
  const slider = $("replay-step");
  slider.max = last;
  let at = last;
  const go = (to) => {
    at = Math.max(0, Math.min(last, to));
    show(positions[at], at);
    slider.value = at;
    $("replay-caption").textContent = `${at} / ${last} · ${positions[at].caption}`;
  };
  $("replay-first").addEventListener("click", () => go(0));
  $("replay-back").addEventListener("click", () => go(at - 1));
  $("replay-forward").addEventListener("click", () => go(at + 1));
  $("replay-last").addEventListener("click", () => go(last));
  slider.addEventListener("input", () => go(Number(slider.value)));
  document.addEventListener("keydown", (event) => {
    const moves = { ArrowLeft: at - 1, ArrowRight: at + 1, Home: 0, End: last };
    if (event.key in moves) go(moves[event.key]);
  });
  go(last);
  return go;
}
