import { InvalidCalendarError } from '@fleetcron/core';

/** A span of local dates, both ends inclusive, as `'YYYY-MM-DD'`. */
export interface Horizon {
  from: string;
  to: string;
  /** Calendar years the span touches, in order. */
  years: number[];
}

/** The longest horizon a calendar may cover, in years (its expansion is published with every heartbeat). */
export const MAX_HORIZON_YEARS = 50;

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

function validDate(text: unknown): text is string {
  if (typeof text !== 'string') return false;
  const m = DATE.exec(text);
  if (!m) return false;
  const d = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])));
  return d.toISOString().slice(0, 10) === text;
}

/**
 * Checks `from` and `to` (`'YYYY-MM-DD'`, inclusive, `from` ≤ `to`, at most
 * {@link MAX_HORIZON_YEARS} years apart).
 *
 * @throws InvalidCalendarError naming `${field}.from` or `${field}.to`.
 */
export function readHorizon(options: { from?: unknown; to?: unknown }, field: string): Horizon {
  for (const key of ['from', 'to'] as const) {
    if (!validDate(options?.[key])) {
      throw new InvalidCalendarError(
        `${field}.${key}`,
        `${JSON.stringify(options?.[key])} is not a date; use YYYY-MM-DD (the horizon is inclusive: from: '2026-01-01', to: '2027-12-31').`,
      );
    }
  }
  const from = options.from as string;
  const to = options.to as string;
  if (to < from) {
    throw new InvalidCalendarError(`${field}.to`, `${to} is before from ${from}.`);
  }
  const first = Number(from.slice(0, 4));
  const last = Number(to.slice(0, 4));
  if (last - first >= MAX_HORIZON_YEARS) {
    throw new InvalidCalendarError(
      `${field}.to`,
      `the horizon ${from} to ${to} spans more than ${MAX_HORIZON_YEARS} years; rebuild the calendar as years pass (e.g. at each deploy) instead.`,
    );
  }
  return { from, to, years: Array.from({ length: last - first + 1 }, (_, i) => first + i) };
}
