import { AmbiguousCronDialectError, InvalidCronError, InvalidOptionError } from '../errors.js';
import type { Trigger } from '../trigger.js';
import { afterTime } from './after-time.js';
import {
  type CompiledCron,
  compileCron,
  normalizeCron,
  splitCron,
  usesHash,
} from './cron-matcher.js';
import { CRON_DIALECTS, type CronDialect, isDialectAmbiguous, readWeekdays } from './dialect.js';
import { nextInstantInZone, type WallClockMatcher } from './dst.js';
import { resolveTimeZone } from './timezone.js';
import { inYears } from './year-field.js';

/** Options of {@link cron}. */
export interface CronOptions {
  /**
   * IANA time zone the expression's wall-clock times are read in, e.g. `Europe/Berlin`.
   * Default `UTC`, never the process's own zone, so instances in different zones agree.
   */
  tz?: string;
  /**
   * What seeds `H` (hashed values). Default: the expression. The scheduler seeds a job's `H`
   * with the job's name (as Jenkins does), so jobs sharing `H * * * *` spread over the hour.
   */
  seed?: string;
  /**
   * How weekday numbers are read. `'unix'`: `0`-`7`, `0` and `7` = Sunday, 5 or 6 fields.
   * `'quartz'`: `1`-`7` = Sunday-Saturday (so `6L` is the last Friday, `2-6` Monday to Friday,
   * `6#3` the third Friday, `L` alone Saturday), 6 fields or 7 with the year last. Names
   * (`MON-FRI`) mean the same in both. Default: Unix, except that a 6- or 7-field expression
   * with `?` in a day field and numeric weekdays throws {@link AmbiguousCronDialectError}
   * instead of guessing.
   */
  dialect?: CronDialect;
}

/** A {@link Trigger} built by {@link cron}; exposes its expression and zone for logs. */
export interface CronTrigger extends Trigger {
  /** The expression as given. */
  readonly expression: string;
  /** The time zone the expression is read in. */
  readonly tz: string;
  /** The dialect given, or `undefined` (Unix numbering, ambiguous expressions refused). */
  readonly dialect: CronDialect | undefined;
  /** The `H` seed given, or `undefined` (the expression seeds `H`). */
  readonly seed: string | undefined;
  /** Whether the expression uses `H`. */
  readonly hashed: boolean;
  /** The same schedule with `H` seeded by `seed` (what `Scheduler.add()` does with the job name). */
  withSeed(seed: string): CronTrigger;
}

/** Parsed expressions shared by jobs with the same expression (a fleet often has many). */
const cache = new Map<string, CompiledCron>();
const CACHE_LIMIT = 1000;
/** A fixed instant for the construction-time check that the expression fires at all. */
const PROBE_FROM = Date.UTC(2000, 0, 1);

function compile(
  expression: string,
  dialect: CronDialect,
  seed: string | undefined,
): CompiledCron & { hashed: boolean } {
  let fields: string[];
  let years: number[] | null;
  try {
    ({ fields, years } = normalizeCron(expression, dialect));
  } catch (error) {
    throw new InvalidCronError('expression', expression, error);
  }
  const hashed = usesHash(fields);
  const base = years === null ? fields.join(' ') : `${fields.join(' ')} ${years.join(',')}`;
  const key = hashed && seed !== undefined ? `${base}\u0000${seed}` : base;
  const hit = cache.get(key);
  if (hit) return { ...hit, resolved: asWritten(hit.resolved, expression, dialect), hashed };
  let compiled: CompiledCron;
  try {
    compiled = compileCron(fields, hashed ? seed : undefined);
  } catch (error) {
    throw new InvalidCronError('expression', expression, error);
  }
  if (years !== null) compiled = { ...compiled, match: inYears(compiled.match, years) };
  // Probe from the first allowed year, so a schedule of past years is valid (and has no fires).
  const probeFrom = years === null ? PROBE_FROM : Date.UTC(years[0] as number, 0, 1) - 1;
  if (compiled.match(probeFrom) === null) {
    throw new InvalidCronError('expression', expression, new Error('it never fires'));
  }
  // shared by every trigger of this expression: jobs on one expression ask for the same fires
  compiled = { ...compiled, match: rememberRecent(compiled.match) };
  if (cache.size >= CACHE_LIMIT) cache.delete(cache.keys().next().value as string);
  cache.set(key, compiled);
  return { ...compiled, resolved: asWritten(compiled.resolved, expression, dialect), hashed };
}

/** Answers each shared cron matcher remembers (see {@link rememberRecent}). */
const REMEMBERED_ANSWERS = 64;

/**
 * `match` that answers a repeated question from its recent answers (the newest
 * {@link REMEMBERED_ANSWERS}): the matcher is pure, and the triggers of one expression share it,
 * so 10,000 jobs on one expression asking for the fire after the same time cost one cron
 * computation, not 10,000 (each is a few luxon date objects). Several recent answers, not only
 * the last: each job asks a sequence of questions (the catch-up pass walks from the job's mark to
 * now, then from the grace before start; a zone's DST rule asks around the instant), and the
 * jobs' sequences interleave.
 */
function rememberRecent(match: WallClockMatcher): WallClockMatcher {
  const answers = new Map<number, number | null>();
  return (from) => {
    const known = answers.get(from);
    if (known !== undefined) return known;
    const answer = match(from);
    if (answers.size >= REMEMBERED_ANSWERS) answers.delete(answers.keys().next().value as number);
    answers.set(from, answer);
    return answer;
  };
}

/**
 * `resolved` with the weekdays (and year) as written in the quartz dialect, not in the engine's
 * Unix numbers (the cache is shared by both dialects, so this is applied after it).
 */
function asWritten(resolved: string, expression: string, dialect: CronDialect): string {
  if (dialect !== 'quartz') return resolved;
  return [...resolved.split(' ').slice(0, 5), ...splitCron(expression).slice(5)].join(' ');
}

/** The dialect the expression is read in; throws when it is given badly or must be given. */
function dialectOf(expression: string, given: unknown): CronDialect {
  if (given !== undefined) {
    if (!CRON_DIALECTS.includes(given as CronDialect)) {
      throw new InvalidOptionError(
        'dialect',
        `must be one of ${CRON_DIALECTS.map((d) => JSON.stringify(d)).join(', ')}, got ${JSON.stringify(given)}.`,
      );
    }
    return given as CronDialect;
  }
  const fields = splitCron(expression);
  if (isDialectAmbiguous(fields)) {
    const weekdays = fields[5] as string;
    throw new AmbiguousCronDialectError(
      'expression',
      expression,
      weekdays,
      { quartz: readWeekdays(weekdays, 'quartz'), unix: readWeekdays(weekdays, 'unix') },
      fields.length === 7,
    );
  }
  return 'unix';
}

/**
 * A cron schedule. Accepts 5 fields (`minute hour day-of-month month day-of-week`), 6 fields
 * (seconds first), nicknames (`@yearly` `@annually` `@monthly` `@weekly` `@daily` `@midnight`
 * `@hourly`), `?` (day fields only), `L`, `L-n` (day-of-month: n days before the last day, e.g.
 * `L-3`), `nW`/`LW`, `nL` and `#` (day-of-week), `H` (hashed: seeded by `seed`, which the
 * scheduler sets to the job name, else by the expression, so every instance agrees; `describe()`
 * shows the values chosen) and month/weekday names (`JAN`, `MON-FRI`). `L-n`, `nW` and `LW` stand alone
 * in their field; other `L` forms (`1-L`, `L-3,15`, `L-3W`) are refused with a message saying
 * so. When both day-of-month and day-of-week are restricted (neither is `*` or `?`), a day
 * matches if either matches.
 *
 * `dialect: 'quartz'` reads weekday numbers as Quartz does (`1`-`7` = SUN-SAT) and takes an
 * optional seventh field, the year (`2027`, `2026-2028`, `2026/2`, lists, `*`; 1970-2099); after
 * its last year the trigger has no more fires (`next()` answers `null`). Without a dialect, a 6-
 * or 7-field expression with `?` and numeric weekdays is refused, because the two
 * dialects read it differently; every other expression reads as before (Unix numbering).
 *
 * Times are wall-clock times in `tz`. DST: with an unrestricted hour field the trigger fires
 * at every real instant that matches (twice in a repeated hour, never in a skipped one); with a
 * specific hour it fires once per wall-clock time: at the first occurrence in a repeated hour,
 * and at the end of the gap for a time inside a skipped hour.
 *
 * The expression is parsed once, here; `next()` reuses it. `next()` throws
 * `InvalidOptionError` (field `after`) for an Invalid Date.
 *
 * @throws InvalidCronError (field `expression`) for a bad or never-firing expression or `@reboot`.
 * @throws AmbiguousCronDialectError (code `AMBIGUOUS_CRON_DIALECT`, field `expression`) for an
 *   expression that Quartz and Unix read differently, given without `dialect`.
 * @throws InvalidOptionError (field `dialect`) for a dialect other than `unix` or `quartz`.
 * @throws UnknownTimezoneError (field `tz`) for a zone the runtime's Intl does not know.
 */
export function cron(expression: string, options: CronOptions = {}): CronTrigger {
  if (typeof expression !== 'string') {
    throw new InvalidCronError('expression', String(expression));
  }
  const { zone, utc } = resolveTimeZone('tz', options?.tz ?? 'UTC');
  const seed = options?.seed;
  if (seed !== undefined && typeof seed !== 'string') {
    throw new InvalidOptionError(
      'seed',
      `must be a string (e.g. the job name), got ${typeof seed}.`,
    );
  }
  const dialect = options?.dialect;
  const { match, hourRestricted, resolved, hashed } = compile(
    expression,
    dialectOf(expression, dialect),
    seed,
  );
  // with H, the description names the values it chose: `H` → `37` (the minute)
  const chose = hashed
    ? `; H: ${resolved}${seed === undefined ? '' : ` seeded by ${JSON.stringify(seed)}`}`
    : '';
  const named = dialect === undefined ? '' : `; dialect ${dialect}`;
  const description = `cron(${expression} ${zone}${named}${chose})`;
  return {
    expression,
    tz: zone,
    dialect,
    seed,
    hashed,
    withSeed: (by: string) =>
      cron(
        expression,
        dialect === undefined ? { tz: zone, seed: by } : { tz: zone, seed: by, dialect },
      ),
    next(after: Date): Date | null {
      const from = afterTime(after, description);
      const at = utc ? match(from) : nextInstantInZone(match, zone, from, hourRestricted);
      return at === null ? null : new Date(at);
    },
    describe: () => description,
    // the dialect is part of the definition (only when given, so existing jobs keep their hash)
    spec: {
      kind: 'cron',
      expression,
      tz: zone,
      ...(seed === undefined ? {} : { seed }),
      ...(dialect === undefined ? {} : { dialect }),
    },
  };
}
