import type { WallClockMatcher } from './dst.js';

/**
 * The optional seventh field of the Quartz dialect: the year. `*`, a year, a range `a-b`, a step
 * `a/s`, `a-b/s` or `* /s`, and lists of these, 1970 to 2099 as in Quartz.
 */

const MIN_YEAR = 1970;
const MAX_YEAR = 2099;
const PART = /^(\*|\d{4})(?:-(\d{4}))?(?:\/(\d+))?$/;

/** The sorted years a year field allows; throws an Error saying what is wrong. */
export function parseYearField(field: string): number[] {
  const years = new Set<number>();
  for (const part of field.split(',')) {
    const m = PART.exec(part);
    if (!m) {
      throw new Error(
        `${part} in year: write a year (2027), a range (2027-2029), a step (2026/2) or *, years ${MIN_YEAR} to ${MAX_YEAR}`,
      );
    }
    const [, from = '*', to, step] = m;
    const start = from === '*' ? MIN_YEAR : Number(from);
    const end = to !== undefined ? Number(to) : from === '*' || step ? MAX_YEAR : start;
    const by = step === undefined ? 1 : Number(step);
    if (start < MIN_YEAR || end > MAX_YEAR || end < start || by < 1) {
      throw new Error(
        `${part} in year: years run from ${MIN_YEAR} to ${MAX_YEAR}, ranges upwards, steps from 1`,
      );
    }
    for (let y = start; y <= end; y += by) years.add(y);
  }
  return [...years].sort((a, b) => a - b);
}

/**
 * `match` restricted to the given years: a match in another year moves the search to the start
 * of the next allowed year; after the last allowed year there is no match (`null`).
 */
export function inYears(match: WallClockMatcher, years: readonly number[]): WallClockMatcher {
  const allowed = new Set(years);
  const nextYear = (year: number): number | undefined => years.find((y) => y > year);
  return (wall) => {
    let from = wall;
    for (let turn = 0; turn <= years.length; turn++) {
      const hit = match(from);
      if (hit === null) return null;
      const year = new Date(hit).getUTCFullYear();
      if (allowed.has(year)) return hit;
      const next = nextYear(year);
      if (next === undefined) return null;
      from = Date.UTC(next, 0, 1) - 1;
    }
    return null;
  };
}
