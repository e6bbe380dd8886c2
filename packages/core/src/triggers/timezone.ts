import { UnknownTimezoneError } from '../errors.js';

const formatters = new Map<string, Intl.DateTimeFormat>();

/** One cached `Intl.DateTimeFormat` per zone; throws `RangeError` for a zone Intl does not know. */
function formatter(zone: string): Intl.DateTimeFormat {
  let f = formatters.get(zone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(zone, f);
  }
  return f;
}

/**
 * Checks `zone` against the runtime's Intl time-zone database and tells whether it is UTC
 * (so callers can skip offset arithmetic). Throws {@link UnknownTimezoneError} naming `field`.
 */
export function resolveTimeZone(field: string, zone: unknown): { zone: string; utc: boolean } {
  if (typeof zone !== 'string' || zone.trim() === '') {
    throw new UnknownTimezoneError(field, String(zone));
  }
  let resolved: string;
  try {
    resolved = formatter(zone).resolvedOptions().timeZone;
  } catch {
    throw new UnknownTimezoneError(field, zone);
  }
  // Node 22+ (ECMA-402 offset zones) accepts "+01:00", Node 20 does not: refuse offsets on every
  // line, so a job's zone does not depend on the Node version (and an offset has no DST anyway).
  if (/^[+\-\u2212]/.test(zone.trim()) || /^[+-]\d/.test(resolved)) {
    throw new UnknownTimezoneError(field, zone);
  }
  return { zone, utc: resolved === 'UTC' };
}

/**
 * The zone's UTC offset in milliseconds at `instant` (epoch ms): wall clock = instant + offset.
 * `zone` must have passed {@link resolveTimeZone}.
 */
export function zoneOffset(zone: string, instant: number): number {
  let y = 1970;
  let mo = 1;
  let d = 1;
  let h = 0;
  let mi = 0;
  let s = 0;
  for (const part of formatter(zone).formatToParts(instant)) {
    const v = Number(part.value);
    switch (part.type) {
      case 'year':
        y = v;
        break;
      case 'month':
        mo = v;
        break;
      case 'day':
        d = v;
        break;
      case 'hour':
        h = v;
        break;
      case 'minute':
        mi = v;
        break;
      case 'second':
        s = v;
        break;
    }
  }
  const wall = new Date(Date.UTC(2000, mo - 1, d, h, mi, s)).setUTCFullYear(y);
  return wall - (instant - (((instant % 1000) + 1000) % 1000));
}

/**
 * The wall-clock reading of instant `at` (epoch ms) in the IANA zone `zone`, as "naive" epoch
 * ms: the local date and time written as if it were UTC, milliseconds kept. `wallClock(at, zone)
 * - at` is the zone's UTC offset at `at`; `new Date(wall).toISOString()` prints the local time.
 * Throws `RangeError` for a zone Intl does not know (`cron()` checks zones with a typed error).
 */
export function wallClock(at: number, zone: string): number {
  return at + zoneOffset(zone, at);
}
