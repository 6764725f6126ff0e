// mulberry32, a small seeded pseudo-random generator: the CPU player's hash keys, and repeatable games in the
// tests and the strength benchmark.

/** Return a generator of unsigned 32-bit integers from `seed`. */
export function mulberry32(seed) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return (t ^ (t >>> 14)) >>> 0;
  };
}

/** Return a generator of floats in [0, 1) from `seed`, in place of Math.random. */
export function seeded(seed) {
  const next = mulberry32(seed);
  return () => next() / 4294967296;
}
