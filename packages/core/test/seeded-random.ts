/**
 * A repeatable stand-in for `Math.random` (a linear congruential generator): the same seed gives
 * the same numbers in [0, 1), so a test of randomised placement judges one known draw.
 */
export function seeded(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}
