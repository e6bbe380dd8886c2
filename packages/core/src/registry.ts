import { randomUUID } from 'node:crypto';
import type { CalendarSpec } from './calendar/calendar-spec.js';
import { InvalidOptionError } from './errors.js';
import type { JobState } from './store.js';

/**
 * The fleet-control part of the Store contract: the instance registry, run requests and the
 * list of known jobs. Every method here is OPTIONAL on {@link Store} so a third-party store
 * written before fleet control keeps working; {@link hasFleetControl} tells whether a store has
 * all of them. The built-in stores (memory, PostgreSQL, Redis, etcd, SQLite) implement them.
 */

/**
 * A JSON description of a built-in trigger, enough for any process to recompute its fires with
 * core's triggers (`triggerFromSpec`). `null` in {@link RegisteredJob.spec} for custom triggers.
 */
export type TriggerSpec =
  /**
   * `cron(expression, { tz })`; `seed` is the `H` seed when it is not the expression; `dialect`
   * when one was given (`unix` or `quartz`).
   */
  | { kind: 'cron'; expression: string; tz: string; seed?: string; dialect?: 'unix' | 'quartz' }
  /** `every(ms, { anchor })`, anchor in epoch ms. */
  | { kind: 'every'; ms: number; anchor: number }
  /** `at(time)`, epoch ms. */
  | { kind: 'at'; at: number };

/** Catch-up policy of a job as it is published in the registry (see the scheduler's `catchUp`). */
export type CatchUpSpec = 'skip' | 'latest' | { max: number; within?: number | null };

/**
 * A job's excluded fires as published in the registry: the calendar's description and its JSON
 * spec (`calendarFromSpec` rebuilds it), `spec: null` for a custom calendar without one.
 */
export interface ExclusionSpec {
  /** The calendar's `describe()`. */
  description: string;
  /** The calendar as JSON for built-in calendars, `null` for custom ones. */
  spec: CalendarSpec | null;
}

/** One job as an instance defines it, published with every heartbeat. */
export interface RegisteredJob {
  /** Job name. */
  name: string;
  /** The trigger's `describe()`. */
  trigger: string;
  /** The trigger as JSON for built-in triggers, `null` for custom ones. */
  spec: TriggerSpec | null;
  /** `definitionHash()` of the job: equal on every instance that defines it the same way. */
  definitionHash: string;
  /** Lease length, ms. */
  leaseMs: number;
  /** Overlap rule as the scheduler names it (e.g. `skip`). */
  overlap: string;
  /** Catch-up policy. */
  catchUp: CatchUpSpec;
  /** `shards` of a sharded job (parts per fire, or `each`); absent for a plain job. */
  shards?: number | 'each';
  /** The job's `startAt` (epoch ms): no fire before it; absent when the job has none. */
  startAt?: number;
  /** The job's `endAt` (epoch ms): no fire after it; absent when the job has none. */
  endAt?: number;
  /** The job's `exclude` calendar; absent when it has none. */
  exclude?: ExclusionSpec;
  /**
   * When this instance registered this definition (its first heartbeat after `add()`), epoch ms
   * on the instance's clock. Orders definitions during a rolling deploy (`definitionsInForce`);
   * absent from instances of older versions (their `startedAt` is used then).
   */
  registeredAt?: number;
}

/** An instance's clock as measured against the backend (filled by the skew work), ms. */
export interface InstanceClock {
  /** Instance clock minus backend clock. */
  offsetMs: number;
  /** Round trip of the measurement. */
  rttMs: number;
}

/** What an instance writes with each heartbeat. */
export interface InstanceRecord {
  /** The scheduler's instance id (unique in the fleet). */
  instanceId: string;
  /** `os.hostname()`. */
  host: string;
  /** `process.pid`. */
  pid: number;
  /** Version of `@fleetcron/core` the instance runs. */
  version: string;
  /** When the scheduler started, epoch ms (instance clock). */
  startedAt: number;
  /** Heartbeat interval, ms. The instance is gone when unseen for 3 × this. */
  heartbeatMs: number;
  /** Clock offset against the backend, `null` when not measured. */
  clock: InstanceClock | null;
  /** Every job the instance defines. */
  jobs: RegisteredJob[];
}

/** An instance as {@link FleetStore.instances} lists it. */
export interface LiveInstance extends InstanceRecord {
  /** Last heartbeat, epoch ms, on the store's clock where it has one (see each store's README). */
  lastSeenAt: number;
}

/** Input of {@link FleetStore.requestRun}. */
export interface RunRequestInput {
  /** Job to run. */
  job: string;
  /** Who asked (a user name, `cli`, `admin:alice`): recorded in history as `requestedBy`. */
  requestedBy: string;
}

/** A pending request to run a job once, fleet-wide. */
export interface RunRequest {
  /** Unique id; the manual fire's identity derives from it. */
  id: string;
  job: string;
  requestedBy: string;
  /** When it was requested, epoch ms (store clock where it has one). */
  requestedAt: number;
}

/** Options of `setPaused` (who asked). */
export interface PauseOptions {
  /** Who paused or resumed, stored as `pausedBy`. Default `null` (unknown). */
  by?: string | null;
}

/** Calls a listener when a run request may be waiting; returns the unsubscribe function. */
export type WatchRunRequests = (listener: (job: string) => void) => () => void;

/** The fleet-control methods of a Store (see the module comment: optional on `Store`). */
export interface FleetStore {
  /**
   * Upserts the instance's record and its `lastSeenAt` (store clock where it has one); also
   * collects records unseen for 3 × their `heartbeatMs`.
   */
  heartbeat(instance: InstanceRecord): Promise<void>;
  /** Live instances (seen within 3 × their `heartbeatMs`), ordered by `instanceId`. */
  instances(): Promise<LiveInstance[]>;
  /** Removes the instance's record at once (clean stop). Unknown ids are a no-op. */
  leave(instanceId: string): Promise<void>;
  /** Stores a run request; any instance defining the job may take it. */
  requestRun(input: RunRequestInput): Promise<RunRequest>;
  /**
   * Atomically removes and returns pending requests for `jobs` (oldest first). Each request is
   * returned to exactly one caller fleet-wide, however many take at once. `instanceId` is the
   * taker (for logs).
   */
  takeRunRequests(jobs: readonly string[], instanceId: string): Promise<RunRequest[]>;
  /** Every job the store holds state for (paused, or with a recorded outcome), by name. */
  listJobs(): Promise<JobState[]>;
  /**
   * Push capability: calls `listener(job)` soon after a run request is stored (LISTEN/NOTIFY,
   * pub/sub, watch). A hint only: the receiver still calls `takeRunRequests`. Absent: poll.
   */
  watchRunRequests?: WatchRunRequests;
}

/** An instance unseen for this many heartbeat intervals is gone. */
export const INSTANCE_EXPIRY_HEARTBEATS = 3;

/** Whether an instance last seen at `lastSeenAt` is gone at `now`. */
export function instanceExpired(
  instance: { lastSeenAt: number; heartbeatMs: number },
  now: number,
): boolean {
  return now - instance.lastSeenAt > INSTANCE_EXPIRY_HEARTBEATS * instance.heartbeatMs;
}

/** Whether `store` has every required fleet-control method (registry, run requests, listJobs). */
export function hasFleetControl<S extends object>(store: S): store is S & FleetStore {
  const s = store as Record<string, unknown>;
  return ['heartbeat', 'instances', 'leave', 'requestRun', 'takeRunRequests', 'listJobs'].every(
    (name) => typeof s[name] === 'function',
  );
}

/** Checks a heartbeat record; every problem is an `InvalidOptionError` naming the field. */
export function assertInstanceRecord(instance: InstanceRecord): void {
  if (typeof instance !== 'object' || instance === null) {
    throw new InvalidOptionError('instance', 'must be an InstanceRecord object.');
  }
  if (typeof instance.instanceId !== 'string' || instance.instanceId === '') {
    throw new InvalidOptionError('instance.instanceId', 'must be a non-empty string.');
  }
  if (!Number.isSafeInteger(instance.heartbeatMs) || instance.heartbeatMs <= 0) {
    throw new InvalidOptionError(
      'instance.heartbeatMs',
      `must be a positive integer number of milliseconds, got ${String(instance.heartbeatMs)}.`,
    );
  }
  if (!Array.isArray(instance.jobs)) {
    throw new InvalidOptionError('instance.jobs', 'must be an array of RegisteredJob.');
  }
}

/** Checks a run request's input and builds the request (fresh UUID) at `now`. */
export function newRunRequest(input: RunRequestInput, now: number): RunRequest {
  if (typeof input?.job !== 'string' || input.job === '') {
    throw new InvalidOptionError('job', 'must be the non-empty name of a job.');
  }
  if (typeof input.requestedBy !== 'string' || input.requestedBy === '') {
    throw new InvalidOptionError(
      'requestedBy',
      'must say who asked (a non-empty string, e.g. "cli" or a user name).',
    );
  }
  return { id: randomUUID(), job: input.job, requestedBy: input.requestedBy, requestedAt: now };
}
