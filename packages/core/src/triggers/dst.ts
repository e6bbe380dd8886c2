import { zoneOffset } from './timezone.js';

/**
 * Finds the first wall-clock time matching a schedule strictly after `wall`. Wall-clock times
 * are "naive" epoch milliseconds: the local reading written as if it were UTC.
 */
export type WallClockMatcher = (wall: number) => number | null;

const HOUR = 3_600_000;
/** Larger than any DST shift in the tz database (2 h), so a probe this far catches any nearby transition. */
const NEAR = 3 * HOUR;
/** Transitions of one zone are always more than a week apart in the tz database. */
const WEEK = 7 * 24 * HOUR;
/** Each loop turn crosses one transition or skips one repeated time; a bound against bad tz data. */
const MAX_TURNS = 1000;

/**
 * Maps a wall-clock schedule in `zone` to the first real instant strictly after `after`
 * (epoch ms), applying fleetcron's DST rule (documented at `cron()` and in the core README):
 *
 * - `hourRestricted = false` (hour field `*`): every real instant whose wall-clock reading
 *   matches fires. A repeated hour fires twice; a skipped hour has no such instants.
 * - `hourRestricted = true` (a specific hour): once per wall-clock time. In a repeated hour only
 *   the first occurrence fires; a time inside a skipped hour fires once, at the first instant
 *   after the gap (e.g. Berlin `30 2` on spring-forward day fires at 03:00 CEST).
 *
 * The walk goes segment by segment (a segment = a span with one UTC offset), so it costs a few
 * `Intl` calls per `next()` and a bisection only when a transition is crossed.
 */
export function nextInstantInZone(
  match: WallClockMatcher,
  zone: string,
  after: number,
  hourRestricted: boolean,
): number | null {
  let from = after + 1; // inclusive lower bound from here on
  for (let turn = 0; turn < MAX_TURNS; turn++) {
    const offset = zoneOffset(zone, from);
    const wall = match(from + offset - 1);
    if (wall === null) return null;
    const at = wall - offset;
    const transition = firstTransition(zone, from, offset, at);
    if (transition === null) {
      if (hourRestricted && isSecondOccurrence(zone, at, wall, offset)) {
        from = at + 1;
        continue;
      }
      return at;
    }
    // The segment [from, transition) holds no match. A gap skips wall times
    // [transition + offset, transition + newOffset): a specific-hour match in it fires at the gap's end.
    const newOffset = zoneOffset(zone, transition);
    if (hourRestricted && newOffset > offset && wall < transition + newOffset) return transition;
    from = transition;
  }
  return null;
}

/** The first instant in (from, to] whose offset differs from `offset`, or null if none matters. */
function firstTransition(zone: string, from: number, offset: number, to: number): number | null {
  if (to <= from) return null;
  let lo = from;
  let hi = Math.min(to, from + NEAR);
  if (zoneOffset(zone, hi) === offset) {
    // Same offset at both ends: transitions in between come in pairs whose wall times lie
    // between the two readings and so hold no earlier match, unless the second one is just
    // before `to`: then `to` may be the second reading of a repeated hour whose first reading
    // came earlier, and the walk must go segment by segment.
    if (hi === to) return null;
    if (zoneOffset(zone, to) === offset && zoneOffset(zone, Math.max(hi, to - NEAR)) === offset) {
      return null;
    }
    for (;;) {
      lo = hi;
      hi = Math.min(to, lo + WEEK);
      if (zoneOffset(zone, hi) !== offset) break;
    }
  }
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (zoneOffset(zone, mid) === offset) lo = mid;
    else hi = mid;
  }
  return hi;
}

/** True when wall time `wall` (reached at `at` with `offset`) was already reached earlier, before a fall-back. */
function isSecondOccurrence(zone: string, at: number, wall: number, offset: number): boolean {
  const before = zoneOffset(zone, at - NEAR);
  return before > offset && zoneOffset(zone, wall - before) === before;
}
