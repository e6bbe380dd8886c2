import {
  anyOf,
  type Calendar,
  type CalendarSpec,
  type ExcludedDate,
  type ExcludedRange,
  exclusions,
  InvalidCalendarError,
  MAX_CALENDAR_ENTRIES,
} from '@fleetcron/core';

/** Longest reason core accepts. */
const MAX_REASON = 200;

/**
 * Collects the expanded result of a holiday list or an iCalendar file as core exclusions: whole
 * dates and ranges read in the job's zone (or instants), and ranges fixed to a zone of their own
 * (an event with a `TZID`). `toCalendar` turns them into one core calendar whose spec any
 * process rebuilds with `calendarFromSpec`.
 */
export class ExpandedExclusions {
  private readonly dates = new Map<string, string[]>();
  private readonly ranges: ExcludedRange[] = [];
  private readonly zoned = new Map<string, ExcludedRange[]>();

  /** Excludes the whole local day `date` (`'YYYY-MM-DD'`); reasons of one day are joined. */
  addDate(date: string, reason: string): void {
    const reasons = this.dates.get(date) ?? [];
    if (!reasons.includes(reason)) reasons.push(reason);
    this.dates.set(date, reasons);
  }

  /** Excludes a range (see core's `ExcludedRange`), read in `zone` when given, else the job's zone. */
  addRange(range: ExcludedRange, zone?: string): void {
    const entry = { ...range, ...(range.reason ? { reason: clip(range.reason) } : {}) };
    if (zone === undefined) this.ranges.push(entry);
    else {
      const list = this.zoned.get(zone) ?? [];
      list.push(entry);
      this.zoned.set(zone, list);
    }
  }

  /** How many entries were collected. */
  get size(): number {
    let n = this.dates.size + this.ranges.length;
    for (const list of this.zoned.values()) n += list.length;
    return n;
  }

  /**
   * One core calendar of everything collected, described as `description`.
   *
   * @throws InvalidCalendarError (field `field`) over `MAX_CALENDAR_ENTRIES` entries.
   */
  toCalendar(description: string, field: string): Calendar {
    if (this.size > MAX_CALENDAR_ENTRIES) {
      throw new InvalidCalendarError(
        field,
        `expands to ${this.size} entries, more than ${MAX_CALENDAR_ENTRIES} (the calendar is published with every heartbeat); use a shorter horizon.`,
      );
    }
    const dates: ExcludedDate[] = [...this.dates.entries()]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([date, reasons]) => ({ date, reason: clip(reasons.join(' / ')) }));
    const parts: Calendar[] = [];
    if (dates.length > 0 || this.ranges.length > 0 || this.zoned.size === 0) {
      parts.push(
        exclusions({
          ...(dates.length > 0 ? { dates } : {}),
          ...(this.ranges.length > 0 ? { ranges: this.ranges } : {}),
        }),
      );
    }
    for (const [zone, ranges] of [...this.zoned.entries()].sort(([a], [b]) => (a < b ? -1 : 1))) {
      parts.push(exclusions({ zone, ranges }));
    }
    const calendar = parts.length === 1 ? (parts[0] as Calendar) : anyOf(...parts);
    return {
      excludedBy: (fireAt, zone) => calendar.excludedBy(fireAt, zone),
      describe: () => description,
      spec: calendar.spec as CalendarSpec,
    };
  }
}

function clip(reason: string): string {
  return reason.length <= MAX_REASON ? reason : `${reason.slice(0, MAX_REASON - 1)}…`;
}
