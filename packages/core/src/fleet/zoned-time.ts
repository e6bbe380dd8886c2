/** A fire time in UTC and in the job's zone. */
export interface ZonedTime {
  /** Epoch ms. */
  at: number;
  /** ISO 8601 in UTC, e.g. `2026-03-29T01:00:00.000Z`. */
  utc: string;
  /** Wall-clock time in `zone` with its offset, e.g. `2026-03-29 03:00:00 +02:00`. */
  local: string;
  /** The IANA zone of `local`. */
  zone: string;
}

const formats = new Map<string, Intl.DateTimeFormat>();

function formatIn(zone: string): Intl.DateTimeFormat {
  let format = formats.get(zone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formats.set(zone, format);
  }
  return format;
}

/**
 * The wall-clock reading of instant `at` (epoch ms) in the IANA zone `zone`, as "naive" epoch
 * ms: the local date and time written as if it were UTC, milliseconds kept. `wallClock(at, zone)
 * - at` is the zone's UTC offset at `at`; `new Date(wall).toISOString()` prints the local time.
 * Throws `RangeError` for a zone Intl does not know (`cron()` checks zones with a typed error).
 */
export function wallClock(at: number, zone: string): number {
  const parts: Record<string, number> = {};
  for (const part of formatIn(zone).formatToParts(at)) parts[part.type] = Number(part.value);
  const wall = Date.UTC(
    2000,
    (parts.month ?? 1) - 1,
    parts.day ?? 1,
    parts.hour ?? 0,
    parts.minute ?? 0,
    parts.second ?? 0,
  );
  return new Date(wall).setUTCFullYear(parts.year ?? 1970) + (((at % 1000) + 1000) % 1000);
}

/** `at` as UTC ISO text and as wall-clock text with its UTC offset in `zone`. */
export function zonedTime(at: number, zone: string): ZonedTime {
  const wall = wallClock(at, zone);
  const offsetMin = Math.round((wall - at) / 60_000);
  const sign = offsetMin < 0 ? '-' : '+';
  const abs = Math.abs(offsetMin);
  const offset = `${sign}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
  return {
    at,
    utc: new Date(at).toISOString(),
    local: `${new Date(wall).toISOString().slice(0, 19).replace('T', ' ')} ${offset}`,
    zone,
  };
}
