import { type CronExpression, CronExpressionParser } from 'cron-parser';
import {
  assertNoBeforeLastInDayOfWeek,
  type DayOfMonthRule,
  dayOfMonthRule,
} from './day-of-month.js';
import { type CronDialect, quartzWeekdaysToUnix } from './dialect.js';
import type { WallClockMatcher } from './dst.js';
import { parseYearField } from './year-field.js';

/**
 * A parsed cron expression evaluated on wall-clock ("naive", UTC-as-local) milliseconds.
 * cron-parser always runs in UTC here; time zones and DST are applied by `dst.ts`.
 */
export interface CompiledCron {
  /** First matching wall-clock time strictly after `wall`, or null when there is none. */
  readonly match: WallClockMatcher;
  /** False when the hour field allows all 24 hours (DST rule: fire at every matching instant). */
  readonly hourRestricted: boolean;
  /** The six fields with every `H` replaced by the values it chose (for `describe()`). */
  readonly resolved: string;
}

const NICKNAMES: Record<string, string> = {
  '@yearly': '0 0 1 1 *',
  '@annually': '0 0 1 1 *',
  '@monthly': '0 0 1 * *',
  '@weekly': '0 0 * * 0',
  '@daily': '0 0 * * *',
  '@midnight': '0 0 * * *',
  '@hourly': '0 * * * *',
};

/** Bound on day skips while searching a day-rule match (each skip moves to a later day or month). */
const MAX_DAY_SKIPS = 500;
/** Names of the six normalised fields, for messages. */
const FIELD_NAMES = ['second', 'minute', 'hour', 'day-of-month', 'month', 'day-of-week'] as const;
/** `?` ("no specific value") means something only in the two day fields. */
const QUESTION_MARK_FIELDS = new Set([3, 5]);

/** The fields of an expression as written (a nickname is one field), for the dialect check. */
export function splitCron(expression: string): string[] {
  return expression.trim().split(/\s+/);
}

/** Six normalised fields (seconds first, Unix weekday numbers) and the years, if restricted. */
export interface NormalizedCron {
  readonly fields: string[];
  /** Allowed years (Quartz's seventh field), sorted; `null` when every year is allowed. */
  readonly years: number[] | null;
}

/**
 * Turns a user's expression into six fields (seconds first, weekdays in Unix numbering) and the
 * years of a Quartz seventh field, or throws an Error saying why. Nicknames are expanded here;
 * `@reboot` is refused because a fleet has no single boot. In the `quartz` dialect the weekday
 * field is read as 1-7 = SUN-SAT and rewritten in Unix numbers.
 */
export function normalizeCron(expression: string, dialect: CronDialect = 'unix'): NormalizedCron {
  const text = expression.trim();
  if (text.startsWith('@')) {
    const nick = text.toLowerCase();
    if (nick === '@reboot') {
      throw new Error(
        '@reboot is not supported: fleetcron schedules fires in time, it has no boot event; run start-up work yourself before scheduler.start()',
      );
    }
    const expanded = NICKNAMES[nick];
    if (!expanded) {
      throw new Error(`unknown nickname; use one of ${Object.keys(NICKNAMES).join(', ')}`);
    }
    return { fields: ['0', ...expanded.split(' ')], years: null };
  }
  const given = splitCron(text);
  let fields: string[];
  let year = '*';
  if (dialect === 'unix' && given.length === 5) fields = ['0', ...given];
  else if (given.length === 6) fields = given;
  else if (dialect === 'quartz' && given.length === 7) {
    fields = given.slice(0, 6);
    year = given[6] as string;
  } else if (dialect === 'quartz') {
    throw new Error(
      `the quartz dialect has 6 fields (seconds first) or 7 (the year last), got ${text === '' ? 0 : given.length}`,
    );
  } else {
    const hint =
      given.length === 7
        ? '; a seventh field (the year) is Quartz: pass { dialect: "quartz" }'
        : '';
    throw new Error(`expected 5 or 6 fields, got ${text === '' ? 0 : given.length}${hint}`);
  }
  fields.forEach((field, index) => {
    if (field.includes('?') && !QUESTION_MARK_FIELDS.has(index)) {
      throw new Error(
        `? is only allowed in the day-of-month and day-of-week fields, found in the ${FIELD_NAMES[index]} field (${field}); use * there`,
      );
    }
  });
  if (dialect === 'quartz') fields[5] = quartzWeekdaysToUnix(fields[5] ?? '*');
  return { fields, years: year === '*' ? null : parseYearField(year) };
}

function parse(fields: readonly string[], seed?: string): CronExpression {
  const expression = fields.join(' ');
  // hashSeed: cron-parser's `H` would otherwise be random per process; instances must agree.
  // The scheduler seeds it with the job name; without a seed, the expression seeds it.
  return CronExpressionParser.parse(expression, {
    tz: 'UTC',
    currentDate: 0,
    hashSeed: seed ?? expression,
  });
}

/** Whether a field list uses `H` (hashed values; `THU` is no `H`). */
export function usesHash(fields: readonly string[]): boolean {
  return fields.some((field) => /(^|[^A-Z])H/i.test(field));
}

function nextOf(expr: CronExpression, wall: number): number | null {
  try {
    expr.reset(new Date(wall));
    return expr.next().getTime();
  } catch {
    return null; // cron-parser's loop limit: no further match
  }
}

/**
 * `nW`/`LW`/`L-n`: cron-parser matches the time fields and the month with a free day, and this
 * filter keeps the day if it is the one the rule names, or (both day fields restricted, cron's
 * OR rule) if the day-of-week field matches it.
 */
function dayRuleMatcher(
  fields: readonly string[],
  rule: DayOfMonthRule,
  seed?: string,
): WallClockMatcher {
  const [second = '0', minute = '*', hour = '*', , month = '*', dow = '*'] = fields;
  const times = parse([second, minute, hour, '*', month, '*'], seed);
  const days = dow === '*' || dow === '?' ? null : parse(['0', '0', '0', '*', '*', dow], seed);
  return (wall) => {
    let from = wall;
    for (let skip = 0; skip < MAX_DAY_SKIPS; skip++) {
      const hit = nextOf(times, from);
      if (hit === null) return null;
      const date = new Date(hit);
      const y = date.getUTCFullYear();
      const m = date.getUTCMonth();
      const d = date.getUTCDate();
      const target = rule(y, m);
      if (d === target || days?.includesDate(new Date(Date.UTC(y, m, d)))) return hit;
      // Skip to the next candidate day: the next day (OR rule), the target later this month,
      // or the next month.
      const nextDay = days ? d + 1 : target !== null && d < target ? target : null;
      from = (nextDay === null ? Date.UTC(y, m + 1, 1) : Date.UTC(y, m, nextDay)) - 1;
    }
    return null;
  };
}

/**
 * Compiles six normalised fields; `H` is seeded by `seed` (default: the expression). Throws
 * cron-parser's Error for a bad expression.
 */
export function compileCron(fields: readonly string[], seed?: string): CompiledCron {
  assertNoBeforeLastInDayOfWeek(fields[5] ?? '*');
  const rule = dayOfMonthRule(fields[3] ?? '*');
  const expr = parse(rule ? [...fields.slice(0, 3), '*', ...fields.slice(4)] : fields, seed);
  const hourRestricted = expr.fields.hour.values.length !== 24;
  const resolved = rule ? fields.join(' ') : expr.stringify(true);
  if (rule) return { match: dayRuleMatcher(fields, rule, seed), hourRestricted, resolved };
  return { match: (wall) => nextOf(expr, wall), hourRestricted, resolved };
}
