import { InvalidCronError, InvalidOptionError } from '../errors.js';
import type { Trigger } from '../trigger.js';
import { afterTime } from './after-time.js';
import { type CompiledCron, compileCron, normalizeCron, usesHash } from './cron-matcher.js';
import { nextInstantInZone } from './dst.js';
import { resolveTimeZone } from './timezone.js';

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
}

/** A {@link Trigger} built by {@link cron}; exposes its expression and zone for logs. */
export interface CronTrigger extends Trigger {
  /** The expression as given. */
  readonly expression: string;
  /** The time zone the expression is read in. */
  readonly tz: string;
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

function compile(expression: string, seed: string | undefined): CompiledCron & { hashed: boolean } {
  let fields: string[];
  try {
    fields = normalizeCron(expression);
  } catch (error) {
    throw new InvalidCronError('expression', expression, error);
  }
  const hashed = usesHash(fields);
  const key = hashed && seed !== undefined ? `${fields.join(' ')}\u0000${seed}` : fields.join(' ');
  const hit = cache.get(key);
  if (hit) return { ...hit, hashed };
  let compiled: CompiledCron;
  try {
    compiled = compileCron(fields, hashed ? seed : undefined);
  } catch (error) {
    throw new InvalidCronError('expression', expression, error);
  }
  if (compiled.match(PROBE_FROM) === null) {
    throw new InvalidCronError('expression', expression, new Error('it never fires'));
  }
  if (cache.size >= CACHE_LIMIT) cache.delete(cache.keys().next().value as string);
  cache.set(key, compiled);
  return { ...compiled, hashed };
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
 * Times are wall-clock times in `tz`. DST: with an unrestricted hour field the trigger fires
 * at every real instant that matches (twice in a repeated hour, never in a skipped one); with a
 * specific hour it fires once per wall-clock time: at the first occurrence in a repeated hour,
 * and at the end of the gap for a time inside a skipped hour.
 *
 * The expression is parsed once, here; `next()` reuses it. `next()` throws
 * `InvalidOptionError` (field `after`) for an Invalid Date.
 *
 * @throws InvalidCronError (field `expression`) for a bad or never-firing expression or `@reboot`.
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
  const { match, hourRestricted, resolved, hashed } = compile(expression, seed);
  // with H, the description names the values it chose: `H` → `37` (the minute)
  const chose = hashed
    ? `; H: ${resolved}${seed === undefined ? '' : ` seeded by ${JSON.stringify(seed)}`}`
    : '';
  const description = `cron(${expression} ${zone}${chose})`;
  return {
    expression,
    tz: zone,
    seed,
    hashed,
    withSeed: (by: string) => cron(expression, { tz: zone, seed: by }),
    next(after: Date): Date | null {
      const from = afterTime(after, description);
      const at = utc ? match(from) : nextInstantInZone(match, zone, from, hourRestricted);
      return at === null ? null : new Date(at);
    },
    describe: () => description,
    spec:
      seed === undefined
        ? { kind: 'cron', expression, tz: zone }
        : { kind: 'cron', expression, tz: zone, seed },
  };
}
