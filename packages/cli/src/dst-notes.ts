import { type CronDialect, cron, wallClock, zonedTime } from '@fleetcron/core';
import { formatWall, formatWallTime } from './wall-clock.js';

/** How daylight saving time changed one fire (see DESIGN "Daylight saving time"). */
export type DstNote =
  /** The expression's wall time did not exist (clocks went forward): the fire runs at the end of the gap. */
  | { kind: 'moved'; from: string; to: string; text: string }
  /** Wall times that did not exist (clocks went forward) and so never fire, before this fire. */
  | { kind: 'skipped'; wallTimes: string[]; text: string }
  /** This fire is the second pass through a repeated wall time (clocks went back). */
  | { kind: 'repeated'; text: string }
  /** This wall time repeats later (clocks go back) but the expression fires only at the first. */
  | { kind: 'once'; text: string };

/** One upcoming fire: in UTC, in the zone, and what DST did to it. */
export interface UpcomingFire {
  at: number;
  utc: string;
  /** Wall-clock time in the zone with its offset, e.g. `2026-03-29 03:00:00 +02:00`. */
  local: string;
  notes: DstNote[];
}

const MAX_SKIPPED_SCAN = 200;

/**
 * The next `count` fires of `expression` in `tz` (read in `dialect`, see core's `cron()`) after `after`, each with notes on what daylight
 * saving time did: `moved` (a wall time in a gap, run at the gap's end), `skipped` (wall times in
 * a gap that do not fire at all), `repeated` (a second run in a repeated hour) and `once` (a
 * wall time that repeats but fires only at its first occurrence).
 *
 * It compares the real fires with the same expression read in UTC, which has no DST: a wall time
 * that UTC reading has and the zone's fires lack was skipped or moved by a transition.
 *
 * @throws InvalidCronError / UnknownTimezoneError from core's `cron()`.
 */
export function upcomingFires(
  expression: string,
  tz: string,
  after: Date,
  count: number,
  dialect?: CronDialect,
): UpcomingFire[] {
  const how = dialect === undefined ? {} : { dialect };
  const trigger = cron(expression, { tz, ...how });
  const zone = trigger.tz;
  const wallSchedule = cron(expression, { tz: 'UTC', ...how });
  const fires: UpcomingFire[] = [];
  let prevWall = wallClock(after.getTime(), zone);
  let next = trigger.next(after);
  while (next !== null && fires.length < count) {
    const at = next.getTime();
    const wall = wallClock(at, zone);
    const notes: DstNote[] = [];
    if (wall <= prevWall) {
      notes.push({
        kind: 'repeated',
        text: `repeated: ${formatWallTime(wall)} comes twice (clocks went back); this is the second run`,
      });
    } else {
      const missing: number[] = [];
      let w = wallSchedule.next(new Date(prevWall));
      while (w !== null && w.getTime() < wall && missing.length < MAX_SKIPPED_SCAN) {
        missing.push(w.getTime());
        w = wallSchedule.next(w);
      }
      const matches = wallSchedule.next(new Date(wall - 1))?.getTime() === wall;
      if (!matches && missing.length > 0) {
        const from = missing.pop() as number;
        notes.push({
          kind: 'moved',
          from: formatWall(from),
          to: formatWall(wall),
          text: `moved: ${formatWallTime(from)} does not exist (clocks went forward); runs at ${formatWallTime(wall)}`,
        });
      }
      if (missing.length > 0) {
        notes.push({
          kind: 'skipped',
          wallTimes: missing.map(formatWall),
          text: `skipped before it: ${missing.map(formatWallTime).join(', ')} (does not exist, clocks went forward)`,
        });
      }
    }
    const following = trigger.next(next);
    const repeatAt = secondOccurrence(at, wall, zone);
    if (repeatAt !== null && trigger.next(new Date(repeatAt - 1))?.getTime() !== repeatAt) {
      notes.push({
        kind: 'once',
        text: `${formatWallTime(wall)} comes twice (clocks go back); runs only at the first`,
      });
    }
    const zoned = zonedTime(at, zone);
    fires.push({ at, utc: zoned.utc, local: zoned.local, notes });
    prevWall = Math.max(prevWall, wall);
    next = following;
  }
  return fires;
}

/** The later instant with the same wall reading as `at` (a fall-back ahead), or `null`. */
function secondOccurrence(at: number, wall: number, zone: string): number | null {
  const HOUR = 3_600_000;
  const offsetNow = wall - at;
  for (let probe = HOUR / 4; probe <= 3 * HOUR; probe += HOUR / 4) {
    const later = at + probe;
    if (wallClock(later, zone) - later < offsetNow) {
      const candidate = at + (offsetNow - (wallClock(later, zone) - later));
      return wallClock(candidate, zone) === wall ? candidate : null;
    }
  }
  return null;
}
