import type { Calendar } from '../../calendar/index.js';
import {
  DuplicateJobError,
  InvalidOptionError,
  LeaseTooShortError,
  toError,
} from '../../errors.js';
import type { LockCapabilities } from '../../lock.js';
import type { JobHandler, Middleware } from '../../middleware.js';
import type { Trigger } from '../../trigger.js';
import type { CronTrigger } from '../../triggers/cron.js';
import { assertPositiveMs } from '../../validate.js';
import { assertKnownKeys } from '../known-keys.js';
import { nextFire } from './fire-plan.js';
import { checkJitter } from './job-jitter.js';
import { checkName } from './job-name.js';
import {
  type CatchUpPolicy,
  checkCatchUp,
  checkHolderLost,
  type HolderLostPolicy,
} from './job-policies.js';
import { checkShards, type ShardsOption } from './job-shards.js';
import { checkWindow, type JobWindow, withinWindow } from './job-window.js';

export { MAX_JOB_NAME_LENGTH } from './job-name.js';

/** What the job does when its previous run still holds the job's lease at the next fire. */
export type OverlapPolicy = 'skip' | 'allow';

/** A job, as passed to `Scheduler.add()`. */
export interface JobDefinition {
  /** Unique name: the lock key, the store's job id, the label of events. 1–512 characters. */
  name: string;
  /** When the job fires: `cron()`, `every()`, `at()` or any {@link Trigger}. */
  trigger: Trigger;
  /** The job. Its return value is ignored; a throw, a rejection or a non-Error value fails the run. */
  run: JobHandler;
  /** Lease length for this job (default: the scheduler's `leaseMs`). Renewed every third. */
  leaseMs?: number;
  /**
   * `skip` (default): never two runs of the job at once, fleet-wide: a fire that comes while the
   * previous run holds the job's lease is recorded as `skipped` (reason `overlap`).
   * `allow`: every fire gets its own lease; runs of the job may overlap.
   */
  overlap?: OverlapPolicy;
  /** Middleware for this job, inside the scheduler's middleware. */
  middleware?: Middleware[];
  /** Fires missed while the whole fleet was down: `'skip'` (default), `'latest'`, `{ max, within }`. */
  catchUp?: CatchUpPolicy;
  /** A fire whose holder died: `'record'` it `lease_lost` (default) or also `'rerun'` it once. */
  onHolderLost?: HolderLostPolicy;
  /**
   * Split each fire: `n` parts, each claimed and run exactly once fleet-wide, spread over the
   * live instances (`ctx.shard = { index, count }`); or `'each'`: every live instance runs the
   * fire once. Needs a store with the fleet registry. Default: not sharded.
   */
  shards?: ShardsOption;
  /**
   * Fires not to run: a {@link Calendar} of holidays, freeze windows, weekly quiet hours, read in
   * the job's zone. An excluded fire is not claimed anywhere in the fleet and not owed by
   * catch-up; it is published as `fire.excluded` with the calendar's reason.
   */
  exclude?: Calendar;
  /** No fire before this time (a Date or epoch ms): earlier fires are not scheduled, nor owed by catch-up. */
  startAt?: Date | number;
  /** No fire after this time (a Date or epoch ms): the job is then done, like an `at()` that passed. */
  endAt?: Date | number;
  /**
   * Spread the job's fires over time: each fire is claimed and run a fixed offset after its fire
   * time, the same on every instance (from a hash of the job's name and the fire time), from 0 up
   * to `jitterMs` and always before the next fire. `ctx.fireAt` stays the fire time. Default 0.
   */
  jitterMs?: number;
}

/** A validated job definition (internal). */
export interface NormalizedJob {
  readonly name: string;
  readonly trigger: Trigger;
  readonly run: JobHandler;
  readonly leaseMs: number;
  readonly overlap: OverlapPolicy;
  readonly middleware: readonly Middleware[];
  readonly catchUp: CatchUpPolicy;
  readonly onHolderLost: HolderLostPolicy;
  /** `null` for a plain job. */
  readonly shards: ShardsOption | null;
  /** The job's excluded fires, `null` when none. */
  readonly exclude: Calendar | null;
  /** `startAt` and `endAt` as epoch ms (`null`: open); `trigger` is already limited to them. */
  readonly window: JobWindow;
  /** Most delay of a fire after its fire time, ms (0: none); see `jitterOffset`. */
  readonly jitterMs: number;
}

/**
 * Checks `leaseMs` against the backend's minimum, then rounds it up to the backend's granularity.
 * Rounding up (never down) keeps the lease at least as long as asked: etcd, with whole-second
 * leases, holds a 2,500 ms lease as 3,000 ms.
 */
export function normalizeLeaseMs(
  field: string,
  leaseMs: unknown,
  capabilities: LockCapabilities,
  backend: string,
): number {
  assertPositiveMs(field, leaseMs);
  if (leaseMs < capabilities.minLeaseMs) {
    throw new LeaseTooShortError(field, leaseMs, capabilities.minLeaseMs, backend);
  }
  const granularity = capabilities.leaseGranularityMs > 0 ? capabilities.leaseGranularityMs : 1;
  return Math.ceil(leaseMs / granularity) * granularity;
}

/** True when `value` looks like a {@link Trigger}. */
export function isTrigger(value: unknown): value is Trigger {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as Trigger).next === 'function' &&
    typeof (value as Trigger).describe === 'function'
  );
}

/** Checks a middleware list, naming the field of the first bad entry. */
export function validateMiddleware(field: string, value: unknown): Middleware[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) {
    throw new InvalidOptionError(field, 'must be an array of middleware functions.');
  }
  value.forEach((m, i) => {
    if (typeof m !== 'function') {
      throw new InvalidOptionError(
        `${field}[${i}]`,
        `must be a middleware function, got ${typeof m}.`,
      );
    }
  });
  return [...value] as Middleware[];
}

/**
 * Validates a job definition for `add()`. Every problem is a typed error naming the field, so bad
 * input fails at `add()` and never at fire time. The trigger is asked for one fire time to prove
 * it works.
 */
export function validateJob(
  definition: unknown,
  context: {
    existing: ReadonlySet<string> | ReadonlyMap<string, unknown>;
    defaultLeaseMs: number;
    capabilities: LockCapabilities;
    backend: string;
    now: number;
    /** The scheduler's store has the fleet registry (sharded jobs need it). Default false. */
    hasRegistry?: boolean;
    /** The lock's claim window, ms (bounds `jitterMs`). Default: no bound but a day's. */
    windowMs?: number;
  },
): NormalizedJob {
  if (typeof definition !== 'object' || definition === null) {
    throw new InvalidOptionError('job', 'must be an object { name, trigger, run }.');
  }
  assertKnownKeys(definition, JOB_KEYS, 'add()');
  const d = definition as Partial<JobDefinition>;
  const name = checkName(d.name);
  if (context.existing.has(name)) throw new DuplicateJobError(name);
  const window = checkWindow(d.startAt, d.endAt);
  const trigger = withinWindow(seededByName(checkTrigger(d.trigger, context.now), name), window);
  if (typeof d.run !== 'function') {
    throw new InvalidOptionError(
      'run',
      `must be a function (ctx) => unknown, got ${typeof d.run}.`,
    );
  }
  const leaseMs =
    d.leaseMs === undefined
      ? context.defaultLeaseMs
      : normalizeLeaseMs('leaseMs', d.leaseMs, context.capabilities, context.backend);
  const catchUp = checkCatchUp(d.catchUp, context.capabilities, context.backend);
  return {
    name,
    trigger,
    run: d.run,
    leaseMs,
    overlap: checkOverlap(d.overlap),
    middleware: validateMiddleware('middleware', d.middleware),
    catchUp,
    onHolderLost: checkHolderLost(d.onHolderLost, context.capabilities, context.backend),
    shards: checkShards(d.shards, { hasRegistry: context.hasRegistry === true, catchUp }),
    exclude: checkCalendar(d.exclude),
    window,
    jitterMs: checkJitter(d.jitterMs, context.windowMs),
  };
}

/** The keys of a {@link JobDefinition} (the compiler keeps the list complete). */
const JOB_KEYS = Object.keys({
  name: true,
  trigger: true,
  run: true,
  leaseMs: true,
  overlap: true,
  middleware: true,
  catchUp: true,
  onHolderLost: true,
  shards: true,
  exclude: true,
  startAt: true,
  endAt: true,
  jitterMs: true,
} satisfies Record<keyof JobDefinition, true>);

/** Checks that `value` (the `exclude` option) is a {@link Calendar}, or absent. */
function checkCalendar(value: unknown): Calendar | null {
  if (value === undefined || value === null) return null;
  const calendar = value as Partial<Calendar>;
  if (typeof calendar.excludedBy !== 'function' || typeof calendar.describe !== 'function') {
    throw new InvalidOptionError(
      'exclude',
      'must be a Calendar (an object with excludedBy(fireAt, zone) and describe()); use exclusions() or a calendar of @fleetcron/calendar.',
    );
  }
  return calendar as Calendar;
}

function checkOverlap(value: unknown): OverlapPolicy {
  const overlap = value ?? 'skip';
  if (overlap !== 'skip' && overlap !== 'allow') {
    throw new InvalidOptionError(
      'overlap',
      `must be 'skip' or 'allow', got ${JSON.stringify(overlap)}.`,
    );
  }
  return overlap;
}

/**
 * A cron trigger using `H` without its own seed is seeded with the job name (as Jenkins does),
 * so jobs sharing `H * * * *` spread over the hour; every instance computes the same times.
 */
function seededByName(trigger: Trigger, name: string): Trigger {
  const c = trigger as Partial<CronTrigger>;
  if (!c.hashed || c.seed !== undefined || typeof c.withSeed !== 'function') return trigger;
  return c.withSeed(name);
}

/**
 * Checks that `value` is a Trigger and asks it for one fire, so a broken trigger fails at
 * `add()`, not at fire time.
 */
function checkTrigger(value: unknown, now: number): Trigger {
  if (!isTrigger(value)) {
    throw new InvalidOptionError(
      'trigger',
      'must be a Trigger (an object with next(after) and describe()); use cron(), every() or at().',
    );
  }
  const trigger = value;
  let next: unknown;
  try {
    next = trigger.next(new Date(now));
  } catch (error) {
    throw new InvalidOptionError('trigger', `next() threw: ${toError(error).message}`, {
      cause: error,
    });
  }
  if (next !== null && !(next instanceof Date && Number.isFinite(next.getTime()))) {
    throw new InvalidOptionError('trigger', 'next() must return a valid Date or null.');
  }
  if (next !== null) {
    nextFire(trigger, now); // throws TriggerError unless it is after now
    nextFire(trigger, next.getTime()); // and the fire after it must move on too
  }
  return trigger;
}
