import { nextInstantInZone } from '../triggers/dst.js';
import { wallClock } from '../triggers/timezone.js';

/**
 * Local ("wall-clock") times of calendars, as core's triggers handle them: a local date and time
 * written as if it were UTC, in epoch ms (see `wallClock`).
 */

const DAY = 86_400_000;
/** More than any UTC offset in the tz database (−12 h to +14 h). */
const WIDEST_OFFSET = 15 * 3_600_000;

/** Naive epoch ms of a valid `'YYYY-MM-DD'`, or `null` when the text is not such a date. */
export function parseLocalDate(text: unknown): number | null {
  if (typeof text !== 'string') return null;
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
  if (!m) return null;
  return validWall(Number(m[1]), Number(m[2]), Number(m[3]), 0, 0, 0);
}

/** Minutes since midnight of `'HH:MM'` (`'24:00'` only when `allowEndOfDay`), else `null`. */
export function parseClockTime(text: unknown, allowEndOfDay: boolean): number | null {
  if (typeof text !== 'string') return null;
  const m = /^(\d{2}):(\d{2})$/.exec(text);
  if (!m) return null;
  const h = Number(m[1]);
  const min = Number(m[2]);
  if (h === 24 && min === 0 && allowEndOfDay) return 24 * 60;
  return h < 24 && min < 60 ? h * 60 + min : null;
}

/** A boundary of a range: a local time (read in a zone) or an instant (epoch ms). */
export type Boundary =
  | { kind: 'local'; wall: number; dateOnly: boolean }
  | { kind: 'instant'; at: number };

/**
 * Reads `'YYYY-MM-DD'`, `'YYYY-MM-DDTHH:MM[:SS]'` (local) or the same followed by `Z` or
 * `±HH:MM` (an instant); `null` when the text is none of them or names a day or time that does
 * not exist (`2026-02-30`, `25:00`).
 */
export function parseBoundary(text: unknown): Boundary | null {
  if (typeof text !== 'string') return null;
  const date = parseLocalDate(text);
  if (date !== null) return { kind: 'local', wall: date, dateOnly: true };
  const m = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2}))?(Z|[+-]\d{2}:\d{2})?$/.exec(
    text,
  );
  if (!m) return null;
  const wall = validWall(
    Number(m[1]),
    Number(m[2]),
    Number(m[3]),
    Number(m[4]),
    Number(m[5]),
    Number(m[6] ?? 0),
  );
  if (wall === null) return null;
  const offset = m[7];
  if (offset === undefined) return { kind: 'local', wall, dateOnly: false };
  if (offset === 'Z') return { kind: 'instant', at: wall };
  const sign = offset.startsWith('-') ? -1 : 1;
  const oh = Number(offset.slice(1, 3));
  const om = Number(offset.slice(4, 6));
  if (oh > 14 || om > 59) return null;
  return { kind: 'instant', at: wall - sign * (oh * 60 + om) * 60_000 };
}

function validWall(y: number, mo: number, d: number, h: number, mi: number, s: number) {
  if (mo < 1 || mo > 12 || d < 1 || h > 23 || mi > 59 || s > 59) return null;
  const wall = Date.UTC(y, mo - 1, d, h, mi, s);
  const check = new Date(wall);
  return check.getUTCFullYear() === y && check.getUTCDate() === d ? wall : null;
}

/**
 * The instant at which local time `wall` is reached in `zone`: the earliest instant whose local
 * reading is `wall` or later. So a local time repeated by a fall-back is its first occurrence,
 * and one skipped by a spring-forward is the first instant after the gap (the rule cron fires
 * with a specific hour follow, see "Daylight saving time").
 */
export function instantOfLocal(wall: number, zone: string): number {
  const match = (w: number): number | null => (w < wall ? wall : null);
  return nextInstantInZone(match, zone, wall - WIDEST_OFFSET, true) ?? wall;
}

/**
 * The local reading of `at` in `zone` (naive epoch ms), its date (naive midnight) and weekday
 * (0 = Sunday).
 */
export function localDay(at: number, zone: string): { wall: number; day: number; weekday: number } {
  const wall = wallClock(at, zone);
  const day = Math.floor(wall / DAY) * DAY;
  return { wall, day, weekday: new Date(day).getUTCDay() };
}

/** `'YYYY-MM-DD'` of a naive local midnight. */
export function formatLocalDate(day: number): string {
  return new Date(day).toISOString().slice(0, 10);
}

export { DAY };
