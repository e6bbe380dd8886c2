import { createHash } from 'node:crypto';
import { InvalidOptionError } from '../errors.js';
import { assertNonEmptyString } from '../validate.js';

/**
 * The conditions the fleet watchdog raises:
 * - `run_failed`: a run failed after its retries;
 * - `job_overdue`: no success by the expected fire plus a grace (the dead-man's switch);
 * - `fires_missed`: fires nobody claimed (fleet down, every claim failed, unserved schedule);
 * - `run_late`: a run started later than a threshold after its fire time;
 * - `no_live_instance`: the fleet registry holds no live instance;
 * - `clock_skew`: an instance's clock is further from the backend's than the warning bound;
 * - `drift`: live instances disagree on a job's definition.
 */
export type AlertKind =
  | 'run_failed'
  | 'job_overdue'
  | 'fires_missed'
  | 'run_late'
  | 'no_live_instance'
  | 'clock_skew'
  | 'drift';

/** Every {@link AlertKind}, in a stable order. */
export const ALERT_KINDS: readonly AlertKind[] = [
  'run_failed',
  'job_overdue',
  'fires_missed',
  'run_late',
  'no_live_instance',
  'clock_skew',
  'drift',
];

/** How urgent an alert is: `critical` pages someone, `warning` waits for working hours. */
export type AlertSeverity = 'critical' | 'warning' | 'info';

/** Every {@link AlertSeverity}, most urgent first. */
export const ALERT_SEVERITIES: readonly AlertSeverity[] = ['critical', 'warning', 'info'];

/** An alert is `open` from the moment it is raised until the condition clears (`resolved`). */
export type AlertState = 'open' | 'resolved';

/**
 * One raised condition. `key` is stable: the same condition (kind, job, fire) always has the same
 * key, so raising it twice is raising it once. `id` names this one opening (the key plus its
 * opening time), URL-safe, for links from a notification to the console or CLI.
 */
export interface Alert {
  /** This opening of the alert: 16 lower-case hex digits, URL-safe. */
  readonly id: string;
  /** Stable key of the condition, e.g. `run_failed:billing:1767225600000`. */
  readonly key: string;
  /** What was detected. */
  readonly kind: AlertKind;
  /** How urgent it is. */
  readonly severity: AlertSeverity;
  /** The job it is about; `null` for fleet-wide conditions (`no_live_instance`, `clock_skew`). */
  readonly job: string | null;
  /** The scheduled fire time it is about, epoch ms; `null` when not about one fire. */
  readonly fireAt: number | null;
  /** `open` or `resolved`. */
  readonly state: AlertState;
  /** When it was raised, epoch ms. */
  readonly openedAt: number;
  /** When it was resolved, epoch ms; `null` while open. */
  readonly resolvedAt: number | null;
  /** One line for a human: what happened, e.g. `billing failed after 3 attempts`. */
  readonly summary: string;
  /** Facts behind the alert (error message, attempts, lag, instances), JSON-safe. */
  readonly details: Readonly<Record<string, unknown>>;
}

/** What {@link openAlert} needs; `id`, `key`, `state` and the times are derived. */
export interface AlertInput {
  /** What was detected. */
  kind: AlertKind;
  /** How urgent it is. */
  severity: AlertSeverity;
  /** The job, or `null`/absent for a fleet-wide condition. */
  job?: string | null;
  /** The fire time (epoch ms or Date), or `null`/absent when not about one fire. */
  fireAt?: number | Date | null;
  /** One line for a human. */
  summary: string;
  /** Facts behind the alert; must survive `JSON.stringify`. Default `{}`. */
  details?: Record<string, unknown>;
}

/**
 * The stable key of a condition: `kind`, then the job and the fire time when present, joined by
 * `:` (e.g. `job_overdue:export`, `run_failed:billing:1767225600000`, `no_live_instance`).
 */
export function alertKey(kind: AlertKind, job?: string | null, fireAt?: number | null): string {
  const parts: string[] = [kind];
  if (job != null) parts.push(job);
  if (fireAt != null) parts.push(String(fireAt));
  return parts.join(':');
}

/** The id of one opening: the first 16 hex digits of SHA-256 over `key` and `openedAt`. */
export function alertId(key: string, openedAt: number): string {
  return createHash('sha256').update(`${key}\n${openedAt}`).digest('hex').slice(0, 16);
}

/**
 * Builds an open alert raised at `now` (epoch ms).
 *
 * @throws InvalidOptionError (fields `alert.kind`, `alert.severity`, `alert.job`,
 *   `alert.fireAt`, `alert.summary`, `alert.details`) for a bad input.
 */
export function openAlert(input: AlertInput, now: number): Alert {
  const { kind, severity, job = null, fireAt = null, summary, details = {} } = input ?? {};
  if (!ALERT_KINDS.includes(kind)) {
    throw new InvalidOptionError(
      'alert.kind',
      `must be one of ${ALERT_KINDS.join(', ')}, got ${JSON.stringify(kind)}.`,
    );
  }
  if (!ALERT_SEVERITIES.includes(severity)) {
    throw new InvalidOptionError(
      'alert.severity',
      `must be one of ${ALERT_SEVERITIES.join(', ')}, got ${JSON.stringify(severity)}.`,
    );
  }
  if (job !== null) assertNonEmptyString('alert.job', job);
  const fire = fireAt instanceof Date ? fireAt.getTime() : fireAt;
  if (fire !== null && (typeof fire !== 'number' || !Number.isFinite(fire))) {
    throw new InvalidOptionError(
      'alert.fireAt',
      `must be epoch ms, a valid Date or null, got ${String(fireAt)}.`,
    );
  }
  assertNonEmptyString('alert.summary', summary);
  let copy: Record<string, unknown>;
  try {
    copy = JSON.parse(JSON.stringify(details));
  } catch (cause) {
    throw new InvalidOptionError(
      'alert.details',
      'must survive JSON.stringify (no cycles, no BigInt); pass plain values such as error messages.',
      { cause },
    );
  }
  if (typeof copy !== 'object' || copy === null || Array.isArray(copy)) {
    throw new InvalidOptionError('alert.details', 'must be a plain object.');
  }
  const key = alertKey(kind, job, fire);
  return Object.freeze({
    id: alertId(key, now),
    key,
    kind,
    severity,
    job,
    fireAt: fire,
    state: 'open',
    openedAt: now,
    resolvedAt: null,
    summary,
    details: Object.freeze(copy),
  });
}

/** The same alert, resolved at `now` (epoch ms); an alert already resolved is returned as is. */
export function resolveAlert(alert: Alert, now: number): Alert {
  if (alert.state === 'resolved') return alert;
  return Object.freeze({ ...alert, state: 'resolved', resolvedAt: Math.max(now, alert.openedAt) });
}
