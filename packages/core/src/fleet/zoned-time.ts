import { wallClock } from '../triggers/timezone.js';

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

export { wallClock };

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
