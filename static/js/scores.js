// The local scoreboard: games against the computer, kept in the browser's localStorage.

const KEY = "tab.scores.v1";
const KEEP = 200;

/** Return the recorded games, newest first. */
export function loadScores() {
  try {
    const scores = JSON.parse(localStorage.getItem(KEY) || "[]");
    return Array.isArray(scores) ? scores : [];
  } catch {
    return [];
  }
}

/** Record a finished game: {player, size, level, levelName, first, result ("win"/"loss"/"quit"), moves, captured}. */
export function recordScore(game) {
  const scores = [{ when: new Date().toISOString(), ...game }, ...loadScores()].slice(0, KEEP);
  try {
    localStorage.setItem(KEY, JSON.stringify(scores));
  } catch {
    // Storage full or disabled (private browsing): the game still ends normally.
  }
  return scores;
}

export function clearScores() {
  localStorage.removeItem(KEY);
}

/** Return the totals: played, won, lost, win rate, and the best winning streak. */
export function summarize(scores) {
  const won = scores.filter((score) => score.result === "win").length;
  let streak = 0;
  let best = 0;
  for (const score of [...scores].reverse()) {
    streak = score.result === "win" ? streak + 1 : 0;
    best = Math.max(best, streak);
  }
  return {
    played: scores.length,
    won,
    lost: scores.length - won,
    rate: scores.length ? Math.round((100 * won) / scores.length) : 0,
    streak: best,
  };
}
