/**
 * Stable, upper-case codes of every error fleetcron throws. Codes never change meaning between
 * versions; match on them (or on the classes) instead of on messages.
 */
export type FleetcronErrorCode =
  | 'INVALID_CRON'
  | 'AMBIGUOUS_CRON_DIALECT'
  | 'INVALID_TRIGGER'
  | 'INVALID_CALENDAR'
  | 'UNKNOWN_TIMEZONE'
  | 'DUPLICATE_JOB'
  | 'UNKNOWN_JOB'
  | 'INVALID_OPTION'
  | 'LEASE_TOO_SHORT'
  | 'BACKEND_UNAVAILABLE'
  | 'DRIVER_LOAD_FAILED'
  | 'LEASE_LOST'
  | 'JOB_TIMEOUT'
  | 'SCHEDULER_STOPPED'
  | 'NOT_LEADER'
  | 'NOTIFY_FAILED'
  | 'NOTIFY_TIMEOUT'
  | 'WATCHDOG_UNDELIVERED'
  | 'SCHEDULE_CONFLICT'
  | 'UNKNOWN_SCHEDULE'
  | 'DUPLICATE_SCHEDULE'
  | 'AUDIT_NOT_KEPT';

const MARKER = Symbol.for('fleetcron.error');

/** Options shared by every fleetcron error. */
export interface FleetcronErrorOptions {
  /** The lower-level error that caused this one, if any. */
  cause?: unknown;
  /** The option or field the error is about, e.g. `leaseMs` or `jobs[billing].trigger`. */
  field?: string;
}

/**
 * Base class of every error fleetcron throws. Carries a stable `code`, the `field` that was
 * wrong (for input errors) and the `cause`. Use {@link isFleetcronError} rather than
 * `instanceof` when two copies of the package may be loaded.
 */
export class FleetcronError extends Error {
  /** Stable upper-case code, e.g. `INVALID_CRON`. */
  readonly code: FleetcronErrorCode;
  /** The option or field the error is about, when the error is about input. */
  readonly field: string | undefined;
  readonly [MARKER] = true;

  constructor(code: FleetcronErrorCode, message: string, options: FleetcronErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.field = options.field;
  }
}

/**
 * True when `value` is a fleetcron error, from this copy of the package or another one
 * (the check uses a global symbol marker, not `instanceof`). Pass `code` to also match the code.
 */
export function isFleetcronError(
  value: unknown,
  code?: FleetcronErrorCode,
): value is FleetcronError {
  if (typeof value !== 'object' || value === null) return false;
  if ((value as { [MARKER]?: unknown })[MARKER] !== true) return false;
  return code === undefined || (value as FleetcronError).code === code;
}

/** Bad input: a wrong option, duration, name or expression. Thrown at construction or `add()`. */
export class InvalidOptionError extends FleetcronError {
  constructor(
    field: string,
    message: string,
    options: { cause?: unknown; code?: FleetcronErrorCode } = {},
  ) {
    super(options.code ?? 'INVALID_OPTION', `${field}: ${message}`, {
      field,
      cause: options.cause,
    });
  }
}

/** A cron expression that cannot be parsed. */
export class InvalidCronError extends InvalidOptionError {
  constructor(field: string, expression: string, cause?: unknown) {
    const reason = cause instanceof Error ? ` (${cause.message})` : '';
    super(
      field,
      `invalid cron expression ${JSON.stringify(expression)}${reason}. Use 5 fields (minute hour day-of-month month day-of-week), 6 fields with seconds first, or a nickname such as @hourly.`,
      { cause, code: 'INVALID_CRON' },
    );
  }
}

/**
 * A calendar of excluded fires built from bad input (code `INVALID_CALENDAR`): a date that does
 * not exist, a range that ends before it starts, an unknown weekday, a date listed twice. The
 * field names the entry, e.g. `exclude.dates[2]`. Thrown when the calendar is built
 * (`exclusions()`, `calendarFromSpec()`, the builders of `@fleetcron/calendar`), never at fire
 * time.
 */
export class InvalidCalendarError extends InvalidOptionError {
  constructor(field: string, message: string, cause?: unknown) {
    super(field, message, { cause, code: 'INVALID_CALENDAR' });
  }
}

/**
 * A cron expression that Unix cron and Quartz read differently (code `AMBIGUOUS_CRON_DIALECT`,
 * field `expression`): `?` with numeric weekdays, which Quartz numbers 1-7 = SUN-SAT and Unix
 * 0-7 with 0 and 7 = SUN. Pass `{ dialect: 'quartz' }` or `{ dialect: 'unix' }`, or write
 * weekday names. `readings` says what each dialect makes of the weekday field.
 */
export class AmbiguousCronDialectError extends InvalidOptionError {
  /** The weekday field as each dialect reads it, e.g. `{ quartz: 'last FRI', unix: 'last SAT' }`. */
  readonly readings: { readonly quartz: string; readonly unix: string };
  constructor(
    field: string,
    expression: string,
    weekdays: string,
    readings: { quartz: string; unix: string },
    hasYear: boolean,
  ) {
    const unix = hasYear
      ? `Unix cron (0-7, 0 and 7 = SUN) would read it as ${readings.unix} but has no year field`
      : `Unix cron (0-7, 0 and 7 = SUN) reads it as ${readings.unix}`;
    super(
      field,
      `cron expression ${JSON.stringify(expression)} is ambiguous: its day-of-week field ${weekdays} uses weekday numbers, which dialects read differently. Quartz (1-7 = SUN-SAT) reads it as ${readings.quartz}; ${unix}. Pass { dialect: 'quartz' } or { dialect: 'unix' } (CLI: --dialect quartz|unix), or write weekday names (MON-FRI).`,
      { code: 'AMBIGUOUS_CRON_DIALECT' },
    );
    this.readings = { ...readings };
  }
}

/**
 * A trigger that broke its contract: `next(after)` answered something that is not a valid Date,
 * or a time not after `after` (it would make the scheduler spin). Thrown at `add()` (field
 * `trigger`); at fire time the job gets no further fires and `trigger.failed` is published.
 */
export class TriggerError extends InvalidOptionError {
  constructor(trigger: { describe(): string }, problem: string) {
    let name = 'trigger';
    try {
      name = `trigger ${trigger.describe()}`;
    } catch {
      // keep the plain name
    }
    super('trigger', `${name}: ${problem}.`, { code: 'INVALID_TRIGGER' });
  }
}

/** A time zone name the runtime's Intl database does not know. */
export class UnknownTimezoneError extends InvalidOptionError {
  constructor(field: string, zone: string) {
    super(
      field,
      `unknown time zone ${JSON.stringify(zone)}. Use an IANA name such as "UTC" or "Europe/Berlin".`,
      { code: 'UNKNOWN_TIMEZONE' },
    );
  }
}

/** A job name that is already registered on this scheduler. */
export class DuplicateJobError extends InvalidOptionError {
  constructor(name: string) {
    super(
      'name',
      `a job named ${JSON.stringify(name)} is already registered. Job names must be unique per scheduler; remove() the old one first or pick another name.`,
      { code: 'DUPLICATE_JOB' },
    );
  }
}

/**
 * No job of that name is known where it was asked for: not registered on this scheduler
 * (`trigger()`, `pause()`), defined by no live instance (`FleetClient.requestRun()`), or unknown
 * to the console's fleet view. `field` names the argument that carried the name.
 */
export class UnknownJobError extends FleetcronError {
  /** The job name that was asked for. */
  readonly job: string;
  /**
   * @param job the name asked for.
   * @param field the argument that carried it (`name`, `job`).
   * @param message what is unknown, and where to look.
   */
  constructor(job: string, field: string, message: string) {
    super('UNKNOWN_JOB', message, { field });
    this.job = job;
  }
}

/** A lease shorter than the backend can hold (see `LockCapabilities.minLeaseMs`). */
export class LeaseTooShortError extends InvalidOptionError {
  constructor(field: string, leaseMs: number, minLeaseMs: number, backend: string) {
    super(
      field,
      `lease of ${leaseMs} ms is shorter than the ${backend} backend's minimum of ${minLeaseMs} ms. Set ${field} to at least ${minLeaseMs}.`,
      { code: 'LEASE_TOO_SHORT' },
    );
  }
}

/**
 * The backend could not be reached or did not answer in time. Locks throw it instead of
 * answering `lost`, so the scheduler fails closed: it skips the fire and records why.
 */
export class BackendUnavailableError extends FleetcronError {
  /** Backend name, e.g. `postgres`. */
  readonly backend: string;
  /**
   * @param backend the backend's name, e.g. `etcd`.
   * @param operation the call that failed, e.g. `claim`.
   * @param cause the driver's error; its message is appended to this one's.
   * @param reason what went wrong when no driver error says it (replaces the cause's message).
   */
  constructor(backend: string, operation: string, cause?: unknown, reason?: string) {
    const why = reason ?? (cause instanceof Error ? cause.message : undefined);
    super(
      'BACKEND_UNAVAILABLE',
      `${backend} backend unavailable during ${operation}${why === undefined ? '' : `: ${why}`}`,
      { cause },
    );
    this.backend = backend;
  }

  /**
   * The backend failed in a way no driver error describes (no answer within the deadline, a
   * stream closed early, a write that lost every retry): `reason` says what happened.
   */
  static because(backend: string, operation: string, reason: string): BackendUnavailableError {
    return new BackendUnavailableError(backend, operation, undefined, reason);
  }

  /**
   * The caller's `AbortSignal` fired before the call was sent (its deadline passed): nothing
   * reached the backend and nothing was written.
   */
  static notSent(backend: string, operation: string): BackendUnavailableError {
    return BackendUnavailableError.because(
      backend,
      operation,
      'given up on by the caller before it was sent; it was not run',
    );
  }
}

/**
 * The job's lease passed its local deadline (not renewed in time, no longer ours, or the process
 * froze past it). `ctx.signal` is aborted with this reason and `ctx.lease.assertValid()` throws
 * it: stop before any further side effect, another instance may take over.
 */
export class LeaseLostError extends FleetcronError {
  constructor(job: string, fireAt: number, cause?: unknown) {
    super(
      'LEASE_LOST',
      `lease of job ${JSON.stringify(job)} for fire ${new Date(fireAt).toISOString()} was lost; another instance may take over`,
      { cause },
    );
  }
}

/** The `timeout()` middleware gave up on a run; its `ctx.signal` is aborted with this reason. */
export class JobTimeoutError extends FleetcronError {
  constructor(job: string, ms: number) {
    super('JOB_TIMEOUT', `job ${JSON.stringify(job)} timed out after ${ms} ms`);
  }
}

/**
 * An operation was attempted on a scheduler that is stopping or stopped; also the reason of
 * `ctx.signal` when `stop()` passes its drain deadline (the run is then recorded `aborted`).
 */
export class SchedulerStoppedError extends FleetcronError {
  constructor(operation: string) {
    super('SCHEDULER_STOPPED', `cannot ${operation}: the scheduler has been stopped`);
  }
}

/** Wraps any thrown value (including non-Error values) in an Error, keeping Errors as they are. */
export function toError(value: unknown): Error {
  if (value instanceof Error) return value;
  let text: string;
  try {
    text = typeof value === 'string' ? value : JSON.stringify(value);
  } catch {
    text = String(value);
  }
  return new Error(`non-Error value thrown: ${text}`, { cause: value });
}
