import { InvalidCalendarError } from '../errors.js';
import { resolveTimeZone } from '../triggers/timezone.js';
import type { Calendar } from './calendar.js';
import type {
  ExcludedDate,
  ExcludedRange,
  ExclusionsOptions,
  ExclusionsSpec,
  Weekday,
  WeeklyWindow,
} from './calendar-spec.js';
import {
  type Boundary,
  DAY,
  formatLocalDate,
  instantOfLocal,
  localDay,
  parseBoundary,
  parseClockTime,
  parseLocalDate,
} from './local-time.js';

/** At most this many dates, ranges and weekly windows in one calendar (it is sent with every heartbeat). */
export const MAX_CALENDAR_ENTRIES = 5000;
/** At most this many characters in a reason. */
export const MAX_REASON_LENGTH = 200;

const WEEKDAYS = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'] as const;
const KEYS = new Set(['kind', 'zone', 'dates', 'ranges', 'weekly']);
const MINUTE = 60_000;
/** More than any daylight-saving shift in the tz database (2 h), as core's DST walk assumes. */
const DST_SLACK = 3 * 3_600_000;

interface DateEntry {
  day: number;
  reason: string;
}
interface RangeEntry {
  from: Boundary;
  /** Exclusive end (a date `to` already moved to the next midnight). */
  to: Boundary;
  reason: string;
}
interface WindowEntry {
  days: ReadonlySet<number>;
  /** Minutes after the opening day's midnight. */
  fromMin: number;
  /** Minutes after the opening day's midnight, > fromMin (a window across midnight goes past 1440). */
  toMin: number;
  reason: string;
}

/**
 * A {@link Calendar} of explicit exclusions: whole local `dates`, `ranges` and `weekly` windows,
 * read in `zone` when given, else in the zone the scheduler asks with (the job's zone). A fire is
 * excluded when it falls in any of them; the reason is the first match's (dates, then ranges,
 * then weekly windows, each in the order given), or a default such as `excluded date 2026-12-25`.
 *
 * Daylight saving time: every local boundary (a day's midnight, a date-time, a window's
 * `HH:MM`) is the earliest instant whose local reading is that time or later. A time repeated by
 * a fall-back is its first occurrence, a time skipped by a spring-forward is the first instant
 * after the gap (the rule cron fires with a specific hour follow). So each date, range and window
 * is one contiguous span of real time: Berlin's Sunday 2026-10-25 lasts 25 hours, a window
 * `01:00`-`02:30` that night spans 01:00 CEST to 02:30 CEST (the second 02:00-02:30, in CET, is
 * outside it), and a window `02:00`-`03:00` on 2026-03-29 is empty (02:00 and 03:00 are both the
 * instant 03:00 CEST).
 *
 * The calendar's `spec` is its options as JSON (weekdays as numbers), so `calendarFromSpec`
 * rebuilds it in any process.
 *
 * @throws InvalidCalendarError (`INVALID_CALENDAR`) naming the entry, e.g. `exclude.dates[2]`,
 *   for a date that does not exist, a range that ends before it starts, an unknown weekday, a
 *   date listed twice, an unknown key, more than {@link MAX_CALENDAR_ENTRIES} entries;
 *   UnknownTimezoneError (`UNKNOWN_TIMEZONE`, field `exclude.zone`) for an unknown zone.
 */
export function exclusions(options: ExclusionsOptions): Calendar {
  return buildExclusions(options, 'exclude');
}

/** {@link exclusions} with the fields of errors under `field` (for specs nested in `anyOf`). */
export function buildExclusions(options: ExclusionsOptions, field: string): Calendar {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new InvalidCalendarError(
      field,
      'must be an object with dates, ranges and/or weekly (and an optional zone).',
    );
  }
  for (const key of Object.keys(options)) {
    if (!KEYS.has(key)) {
      throw new InvalidCalendarError(
        `${field}.${key}`,
        'is not an option of exclusions(); use zone, dates, ranges or weekly.',
      );
    }
  }
  const fixedZone =
    options.zone === undefined ? null : resolveTimeZone(`${field}.zone`, options.zone).zone;
  const dates = list(options.dates, `${field}.dates`).map((d, i) =>
    readDate(d, `${field}.dates[${i}]`),
  );
  const ranges = list(options.ranges, `${field}.ranges`).map((r, i) =>
    readRange(r, `${field}.ranges[${i}]`, fixedZone),
  );
  const weekly = list(options.weekly, `${field}.weekly`).map((w, i) =>
    readWindow(w, `${field}.weekly[${i}]`),
  );
  const total = dates.length + ranges.length + weekly.length;
  if (total > MAX_CALENDAR_ENTRIES) {
    throw new InvalidCalendarError(
      field,
      `has ${total} entries, more than ${MAX_CALENDAR_ENTRIES} (the calendar is published with every heartbeat); use ranges for runs of days, or a shorter horizon.`,
    );
  }
  const byDay = new Map<number, DateEntry>();
  dates.forEach((entry, i) => {
    const first = byDay.get(entry.day);
    if (first !== undefined) {
      throw new InvalidCalendarError(
        `${field}.dates[${i}]`,
        `${formatLocalDate(entry.day)} is listed twice; list each date once (join the reasons).`,
      );
    }
    byDay.set(entry.day, entry);
  });

  const spec = specOf(options, fixedZone);
  const rangeSpans = new Map<string, Array<[number, number]>>();
  const spansIn = (zone: string): Array<[number, number]> => {
    let spans = rangeSpans.get(zone);
    if (spans === undefined) {
      spans = ranges.map((r) => [instantOf(r.from, zone), instantOf(r.to, zone)]);
      rangeSpans.set(zone, spans);
    }
    return spans;
  };
  const parts = [
    count(dates.length, 'date'),
    count(ranges.length, 'range'),
    count(weekly.length, 'weekly window'),
  ].filter((p) => p !== '');
  const description = `exclusions(${parts.join(', ') || 'nothing'}${fixedZone ? ` in ${fixedZone}` : ''})`;

  return {
    excludedBy(fireAt: number, zone: string): string | null {
      const tz = fixedZone ?? zone;
      const { wall, day, weekday } = localDay(fireAt, tz);
      if (byDay.size > 0) {
        // the fire's local date, or the next one when a fall-back repeated that midnight
        for (const candidate of [day, day + DAY]) {
          const entry = byDay.get(candidate);
          if (entry && within(fireAt, wall, candidate, candidate + DAY, tz)) return entry.reason;
        }
      }
      if (ranges.length > 0) {
        const spans = spansIn(tz);
        for (let i = 0; i < spans.length; i++) {
          const [from, to] = spans[i] as [number, number];
          if (fireAt >= from && fireAt < to) return (ranges[i] as RangeEntry).reason;
        }
      }
      for (const w of weekly) {
        for (let back = -1; back <= 1; back++) {
          const opens = day - back * DAY;
          const opensOn = (weekday - back + 7) % 7;
          if (!w.days.has(opensOn)) continue;
          if (within(fireAt, wall, opens + w.fromMin * MINUTE, opens + w.toMin * MINUTE, tz)) {
            return w.reason;
          }
        }
      }
      return null;
    },
    describe: () => description,
    spec,
  };
}

/**
 * Whether instant `at` (local reading `wall`) is in the span from local time `from` (inclusive)
 * to `to` (exclusive). A reading more than {@link DST_SLACK} outside the span settles it without
 * zone arithmetic: only a fall-back moves a reading back, and by less than that.
 */
function within(at: number, wall: number, from: number, to: number, zone: string): boolean {
  if (wall < from - DST_SLACK || wall >= to + DST_SLACK) return false;
  return at >= instantOfLocal(from, zone) && at < instantOfLocal(to, zone);
}

function instantOf(b: Boundary, zone: string): number {
  return b.kind === 'instant' ? b.at : instantOfLocal(b.wall, zone);
}

function count(n: number, noun: string): string {
  return n === 0 ? '' : `${n} ${noun}${n === 1 ? '' : 's'}`;
}

function list<T>(value: readonly T[] | undefined, field: string): readonly T[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) throw new InvalidCalendarError(field, 'must be an array.');
  return value;
}

function readReason(value: unknown, field: string, fallback: string): string {
  if (value === undefined) return fallback;
  if (typeof value !== 'string' || value.trim() === '' || value.length > MAX_REASON_LENGTH) {
    throw new InvalidCalendarError(
      field,
      `must be a non-empty string of at most ${MAX_REASON_LENGTH} characters, got ${JSON.stringify(value)}.`,
    );
  }
  return value;
}

function readDate(entry: ExcludedDate, field: string): DateEntry {
  const text = typeof entry === 'object' && entry !== null ? entry.date : entry;
  const day = parseLocalDate(text);
  if (day === null) {
    throw new InvalidCalendarError(
      typeof entry === 'object' && entry !== null ? `${field}.date` : field,
      `${JSON.stringify(text)} is not a date; use YYYY-MM-DD (e.g. "2026-12-25").`,
    );
  }
  const reason =
    typeof entry === 'object' && entry !== null
      ? readReason(entry.reason, `${field}.reason`, `excluded date ${text}`)
      : `excluded date ${text}`;
  return { day, reason };
}

function readRange(entry: ExcludedRange, field: string, fixedZone: string | null): RangeEntry {
  if (typeof entry !== 'object' || entry === null) {
    throw new InvalidCalendarError(field, 'must be an object { from, to, reason? }.');
  }
  const from = readBoundary(entry.from, `${field}.from`);
  const to = readBoundary(entry.to, `${field}.to`);
  // a date `to` is inclusive: the range ends when that day ends
  const end: Boundary = to.kind === 'local' && to.dateOnly ? { ...to, wall: to.wall + DAY } : to;
  const comparable = from.kind === end.kind || fixedZone !== null;
  if (comparable) {
    const zone = fixedZone ?? 'UTC';
    if (instantOf(end, zone) <= instantOf(from, zone)) {
      throw new InvalidCalendarError(
        `${field}.to`,
        `${JSON.stringify(entry.to)} is not after from ${JSON.stringify(entry.from)}; a range's to must come after its from (a date to is inclusive, a date-time to exclusive).`,
      );
    }
  }
  const reason = readReason(
    entry.reason,
    `${field}.reason`,
    `excluded ${entry.from} to ${entry.to}`,
  );
  return { from, to: end, reason };
}

function readBoundary(value: unknown, field: string): Boundary {
  const boundary = parseBoundary(value);
  if (boundary === null) {
    throw new InvalidCalendarError(
      field,
      `${JSON.stringify(value)} is not a date or time; use YYYY-MM-DD, a local YYYY-MM-DDTHH:MM, or an instant such as 2026-12-24T17:00:00Z.`,
    );
  }
  return boundary;
}

function readWeekday(value: unknown, field: string): number {
  if (typeof value === 'number' && Number.isInteger(value) && value >= 0 && value <= 6) {
    return value;
  }
  const index =
    typeof value === 'string'
      ? WEEKDAYS.indexOf(value.toLowerCase() as (typeof WEEKDAYS)[number])
      : -1;
  if (index < 0) {
    throw new InvalidCalendarError(
      field,
      `${JSON.stringify(value)} is not a weekday; use 0-6 (0 = Sunday) or sun, mon, tue, wed, thu, fri, sat.`,
    );
  }
  return index;
}

function readWindow(entry: WeeklyWindow, field: string): WindowEntry {
  if (typeof entry !== 'object' || entry === null) {
    throw new InvalidCalendarError(
      field,
      "must be an object { days, from: 'HH:MM', to: 'HH:MM', reason? }.",
    );
  }
  if (!Array.isArray(entry.days) || entry.days.length === 0) {
    throw new InvalidCalendarError(
      `${field}.days`,
      "must be a non-empty array of weekdays, e.g. ['sat', 'sun'].",
    );
  }
  const days = new Set(
    entry.days.map((d: Weekday, i: number) => readWeekday(d, `${field}.days[${i}]`)),
  );
  const fromMin = parseClockTime(entry.from, false);
  if (fromMin === null) {
    throw new InvalidCalendarError(
      `${field}.from`,
      `${JSON.stringify(entry.from)} is not a time of day; use HH:MM from 00:00 to 23:59.`,
    );
  }
  const to = parseClockTime(entry.to, true);
  if (to === null) {
    throw new InvalidCalendarError(
      `${field}.to`,
      `${JSON.stringify(entry.to)} is not a time of day; use HH:MM from 00:00 to 24:00.`,
    );
  }
  const toMin = to > fromMin ? to : to + 24 * 60;
  const names = [...days].map((d) => WEEKDAYS[d]).join(',');
  const reason = readReason(
    entry.reason,
    `${field}.reason`,
    `weekly window ${names} ${entry.from}-${entry.to}`,
  );
  return { days, fromMin, toMin, reason };
}

/** The options as JSON: a copy, weekdays as numbers, the zone as given. */
function specOf(options: ExclusionsOptions, zone: string | null): ExclusionsSpec {
  const spec: ExclusionsSpec = { kind: 'exclusions' };
  if (zone !== null) spec.zone = zone;
  if (options.dates !== undefined) {
    spec.dates = options.dates.map((d) => (typeof d === 'string' ? d : { ...d }));
  }
  if (options.ranges !== undefined) spec.ranges = options.ranges.map((r) => ({ ...r }));
  if (options.weekly !== undefined) {
    spec.weekly = options.weekly.map((w, i) => ({
      ...w,
      days: w.days.map((d, j) => readWeekday(d, `weekly[${i}].days[${j}]`)),
    }));
  }
  return spec;
}
