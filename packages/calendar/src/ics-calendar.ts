import { type Calendar, InvalidCalendarError } from '@fleetcron/core';
import ICAL from 'ical.js';
import { ExpandedExclusions } from './expanded-exclusions.js';
import { readHorizon } from './horizon.js';

const FIELD = 'icsCalendar';
/** Most occurrences walked per recurring event (a guard against `FREQ=SECONDLY` since 1970). */
export const MAX_OCCURRENCES_PER_EVENT = 100_000;

/** Options of {@link icsCalendar}. */
export interface IcsCalendarOptions {
  /** First day of the horizon, `'YYYY-MM-DD'`, inclusive. */
  from: string;
  /** Last day of the horizon, `'YYYY-MM-DD'`, inclusive. */
  to: string;
  /** Prefix of each reason: `${label}: ${SUMMARY}`. Default `'event'`. */
  label?: string;
}

type IcalTime = InstanceType<typeof ICAL.Time>;
type IcalEvent = InstanceType<typeof ICAL.Event>;

/**
 * A calendar of the events of an iCalendar (`.ics`) text between `from` and `to`: each event's
 * span is excluded with the reason `event: <SUMMARY>`. Recurring events (`RRULE`, `RDATE`) are
 * expanded within the horizon with their `EXDATE`s and moved or changed occurrences
 * (`RECURRENCE-ID`); cancelled events and occurrences (`STATUS:CANCELLED`) are left out.
 *
 * How times are read: an all-day event (`VALUE=DATE`) is its local dates (`DTEND` exclusive, as
 * iCalendar says) in the job's zone; a floating time (no zone) is a local time in the job's zone;
 * a UTC time is that instant; a time with a `TZID` that is an IANA zone (`Europe/Berlin`) is read
 * in that zone; another `TZID` (`W. Europe Standard Time`) is converted with the file's
 * `VTIMEZONE`. An event without `DTEND` or `DURATION` lasts one day (all-day) or is an instant
 * that excludes nothing, as iCalendar says.
 *
 * The events are expanded once, here: the calendar's `spec` is core `exclusions` (explicit dates
 * and ranges), so every process rebuilds it with `@fleetcron/core` alone. Fires after `to` are
 * not excluded: rebuild the calendar with a later horizon before then.
 *
 * @throws InvalidCalendarError (`INVALID_CALENDAR`) naming the field: `icsCalendar` for text
 *   that is not iCalendar, `icsCalendar.events[UID]` for an event with a zone that cannot be
 *   read, `icsCalendar.from` / `.to` for a bad horizon.
 */
export function icsCalendar(text: string, options: IcsCalendarOptions): Calendar {
  const horizon = readHorizon(options, FIELD);
  const label = options.label ?? 'event';
  if (typeof label !== 'string' || label.trim() === '') {
    throw new InvalidCalendarError(`${FIELD}.label`, 'must be a non-empty string such as "event".');
  }
  const root = parse(text);
  registerZones(root);
  const expanded = new ExpandedExclusions();
  const lastDay = ICAL.Time.fromDateString(horizon.to);
  lastDay.adjust(1, 0, 0, 0); // the first day after the horizon
  const firstDay = ICAL.Time.fromDateString(horizon.from);

  const vevents = root.getAllSubcomponents('vevent');
  for (const vevent of vevents) {
    if (vevent.hasProperty('recurrence-id')) continue;
    // ical.js relates the file's RECURRENCE-ID exceptions of the same UID to the event itself
    const event = new ICAL.Event(vevent);
    const field = `${FIELD}.events[${JSON.stringify(event.uid ?? event.summary ?? '?')}]`;
    const add = (item: IcalEvent, start: IcalTime, end: IcalTime): void => {
      if (
        String(item.component.getFirstPropertyValue('status') ?? '').toUpperCase() === 'CANCELLED'
      )
        return;
      if (start.compare(lastDay) >= 0 || end.compare(firstDay) <= 0) return; // outside the horizon
      const summary = (item.summary ?? '').trim();
      addSpan(expanded, start, end, `${label}: ${summary || '(no summary)'}`, tzidOf(item), field);
    };
    if (!event.isRecurring()) {
      add(event, event.startDate, endOf(event, event.startDate, event.endDate));
      continue;
    }
    const iterator = event.iterator();
    for (let n = 0; ; n++) {
      const next = iterator.next();
      if (!next || next.compare(lastDay) >= 0) break;
      if (n >= MAX_OCCURRENCES_PER_EVENT) {
        throw new InvalidCalendarError(
          field,
          `recurs more than ${MAX_OCCURRENCES_PER_EVENT} times before ${horizon.to}; use a shorter horizon or a coarser rule.`,
        );
      }
      const details = event.getOccurrenceDetails(next);
      add(details.item, details.startDate, endOf(details.item, details.startDate, details.endDate));
    }
  }
  return expanded.toCalendar(
    `icsCalendar(${horizon.from}..${horizon.to}: ${expanded.size} entries)`,
    FIELD,
  );
}

function parse(text: string): InstanceType<typeof ICAL.Component> {
  if (typeof text !== 'string' || !/BEGIN:VCALENDAR/i.test(text)) {
    throw new InvalidCalendarError(
      FIELD,
      'is not iCalendar text (no BEGIN:VCALENDAR); pass the content of an .ics file.',
    );
  }
  try {
    const root = new ICAL.Component(ICAL.parse(text));
    return root.name === 'vcalendar' ? root : (root.getFirstSubcomponent('vcalendar') ?? root);
  } catch (error) {
    throw new InvalidCalendarError(
      FIELD,
      `cannot be read as iCalendar: ${(error as Error).message}`,
      error,
    );
  }
}

/** Registers the file's VTIMEZONEs that are not IANA zones (those are read with Intl instead). */
function registerZones(root: InstanceType<typeof ICAL.Component>): void {
  for (const vtimezone of root.getAllSubcomponents('vtimezone')) {
    const tzid = String(vtimezone.getFirstPropertyValue('tzid') ?? '');
    if (tzid !== '' && !isIanaZone(tzid) && !ICAL.TimezoneService.has(tzid)) {
      ICAL.TimezoneService.register(vtimezone);
    }
  }
}

/** An occurrence's end: its DTEND/DURATION, else one day for a date, else its start. */
function endOf(_item: IcalEvent, start: IcalTime, end: IcalTime | null | undefined): IcalTime {
  if (end && end.compare(start) > 0) return end;
  const copy = start.clone();
  if (start.isDate) copy.adjust(1, 0, 0, 0);
  return copy;
}

function addSpan(
  expanded: ExpandedExclusions,
  start: IcalTime,
  end: IcalTime,
  reason: string,
  tzid: string | null,
  field: string,
): void {
  if (start.isDate) {
    // DTEND of an all-day event is exclusive: the last excluded day is the one before it
    const last = end.clone();
    last.adjust(-1, 0, 0, 0);
    const from = dateText(start);
    const to = end.isDate ? dateText(last) : dateText(end);
    if (to <= from) expanded.addDate(from, reason);
    else expanded.addRange({ from, to, reason });
    return;
  }
  if (end.compare(start) <= 0) return; // an instant: nothing to exclude
  const zone = zoneOf(start, tzid, field);
  if (zone.kind === 'floating') {
    expanded.addRange({ from: localText(start), to: localText(end), reason });
  } else if (zone.kind === 'iana') {
    expanded.addRange({ from: localText(start), to: localText(end), reason }, zone.tzid);
  } else {
    expanded.addRange({ from: instantText(start), to: instantText(end), reason });
  }
}

/** The `TZID` parameter of the occurrence's `DTSTART`, `null` when it has none. */
function tzidOf(item: IcalEvent): string | null {
  const value = item.component.getFirstProperty('dtstart')?.getParameter('tzid');
  return typeof value === 'string' && value !== '' ? value : null;
}

/**
 * How to read a time: without a `TZID` it is UTC (`Z`) or floating; with an IANA `TZID` it is a
 * local time of that zone (read with Intl, as core reads zones); with another `TZID` it is an
 * instant converted by ical.js with the file's `VTIMEZONE`.
 */
function zoneOf(
  time: IcalTime,
  tzid: string | null,
  field: string,
): { kind: 'floating' } | { kind: 'instant' } | { kind: 'iana'; tzid: string } {
  if (tzid === null) return time.zone?.tzid === 'UTC' ? { kind: 'instant' } : { kind: 'floating' };
  if (isIanaZone(tzid)) return { kind: 'iana', tzid };
  if (ICAL.TimezoneService.has(tzid) && time.zone?.tzid === tzid) return { kind: 'instant' };
  throw new InvalidCalendarError(
    field,
    `has TZID ${JSON.stringify(tzid)}, which is neither an IANA zone nor defined by a VTIMEZONE in the file; add the VTIMEZONE or use an IANA zone.`,
  );
}

function isIanaZone(tzid: string): boolean {
  if (/^[+-]/.test(tzid)) return false;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tzid });
    return true;
  } catch {
    return false;
  }
}

const pad = (n: number, width = 2): string => String(n).padStart(width, '0');

function dateText(t: IcalTime): string {
  return `${pad(t.year, 4)}-${pad(t.month)}-${pad(t.day)}`;
}

function localText(t: IcalTime): string {
  return `${dateText(t)}T${pad(t.hour)}:${pad(t.minute)}:${pad(t.second)}`;
}

function instantText(t: IcalTime): string {
  return new Date(t.toUnixTime() * 1000).toISOString().replace('.000Z', 'Z');
}
