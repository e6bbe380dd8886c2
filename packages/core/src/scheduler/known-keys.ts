import { InvalidOptionError } from '../errors.js';

/**
 * Throws {@link InvalidOptionError} for the first own key of `value` that is not in `known`,
 * naming it (as `field`) and the nearest known key, so a misspelled option (`leasMs`) fails
 * loudly instead of being ignored.
 *
 * @param where what the keys belong to, for the message, e.g. `new Scheduler()`.
 */
export function assertKnownKeys(value: object, known: readonly string[], where: string): void {
  for (const key of Object.keys(value)) {
    if (known.includes(key)) continue;
    throw new InvalidOptionError(
      key,
      `unknown option of ${where}; did you mean ${JSON.stringify(nearest(key, known))}? Known options: ${known.join(', ')}.`,
    );
  }
}

/** The entry of `known` with the smallest edit distance to `key` (case-insensitive). */
export function nearest(key: string, known: readonly string[]): string {
  let best = known[0] ?? '';
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const candidate of known) {
    const d = editDistance(key.toLowerCase(), candidate.toLowerCase());
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  return best;
}

/** Levenshtein distance (insertions, deletions, substitutions). */
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + cost);
    }
    previous = current;
  }
  return previous[b.length]!;
}
