/**
 * Day-of-month forms that cron-parser does not evaluate itself: `nW` (weekday nearest to day n),
 * `LW` (last weekday) and `L-n` (n days before the last day). Each becomes a rule that names the
 * one matching day of a given month; `cron-matcher.ts` filters cron-parser's matches by it.
 */

/** The day (1-31) a rule picks in a month (0-based), or null when that month has none. */
export type DayOfMonthRule = (year: number, month: number) => number | null;

/** `nW` or `LW`, alone in the field. */
const NEAREST_WEEKDAY = /^(L|[1-9]|[12]\d|3[01])W$/i;
/** `L-n`, alone in the field. */
const BEFORE_LAST = /^L-(\d+)$/i;
/** The largest n of `L-n`: 30 days before the 31st is the 1st. */
const MAX_BEFORE_LAST = 30;

function lastDay(year: number, month: number): number {
  return new Date(Date.UTC(year, month + 1, 0)).getUTCDate();
}

/** Day of the weekday nearest to day `n` (or the last day) of the month, inside that month. */
function nearestWeekday(year: number, month: number, n: 'L' | number): number | null {
  const last = lastDay(year, month);
  const day = n === 'L' ? last : n;
  if (day > last) return null;
  const dow = new Date(Date.UTC(year, month, day)).getUTCDay();
  if (dow === 6) return day === 1 ? 3 : day - 1;
  if (dow === 0) return day === last ? day - 2 : day + 1;
  return day;
}

/**
 * The rule of a day-of-month field written as `nW`, `LW` or `L-n`, or null for a field
 * cron-parser evaluates itself (numbers, ranges, steps, lists, `L`, `*`, `?`).
 *
 * @throws Error saying which form is unsupported and what to write instead, for `L-n` with n
 *   outside 1-30, `L-n` inside a list, range or step, `L-nW`, and `L` inside a range.
 */
export function dayOfMonthRule(field: string): DayOfMonthRule | null {
  const w = NEAREST_WEEKDAY.exec(field);
  if (w) {
    const n = w[1]?.toUpperCase() === 'L' ? 'L' : Number(w[1]);
    return (year, month) => nearestWeekday(year, month, n);
  }
  const beforeLast = BEFORE_LAST.exec(field);
  if (beforeLast) {
    const n = Number(beforeLast[1]);
    if (n < 1 || n > MAX_BEFORE_LAST) {
      throw new Error(
        `${field} in day-of-month: n of L-n must be 1 to ${MAX_BEFORE_LAST} (days before the last day of the month)${n === 0 ? '; for the last day itself write L' : ''}`,
      );
    }
    return (year, month) => {
      const day = lastDay(year, month) - n;
      return day >= 1 ? day : null;
    };
  }
  assertSupportedL(field);
  return null;
}

/** Rejects the `L` forms that are neither plain `L` nor one of the rules above, saying why. */
function assertSupportedL(field: string): void {
  if (!/L/i.test(field)) return;
  if (/L-\d+W/i.test(field)) {
    throw new Error(
      `${field} in day-of-month: L-nW (the weekday nearest to n days before the last day) is not supported; use L-n or LW`,
    );
  }
  if (/L-/i.test(field)) {
    throw new Error(
      `${field} in day-of-month: L-n is supported only alone in the field (e.g. L-3), not in a list, range or step; add one job per day rule instead`,
    );
  }
  if (/LW/i.test(field)) {
    throw new Error(
      `${field} in day-of-month: LW is supported only alone in the field, not in a list, range or step`,
    );
  }
  for (const part of field.split(',')) {
    if (/L/i.test(part) && part.toUpperCase() !== 'L') {
      throw new Error(
        `${part} in day-of-month: L is supported as L (last day), LW (last weekday) and L-n (n days before the last day); ranges and steps with L are not`,
      );
    }
  }
}

/** Tells what is unsupported about an `L-n` written in the day-of-week field, if any. */
export function assertNoBeforeLastInDayOfWeek(field: string): void {
  if (/L-/i.test(field)) {
    throw new Error(
      `${field} in day-of-week: L-n is supported only in the day-of-month field (n days before the last day); in day-of-week write nL for the last weekday n of the month, e.g. 5L`,
    );
  }
}
