import { randomUUID } from 'node:crypto';
import { boundActor, checkAuditNote } from './audit/audit-input.js';
import type { CalendarSpec } from './calendar/calendar-spec.js';
import { InvalidOptionError } from './errors.js';
import { checkJsonData } from './json-data.js';
import type { JsonValue } from './schedules/schedule.js';
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
  /** The job's `jitterMs` (each fire claimed up to this long after its time); absent without. */
  jitterMs?: number;
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
  /**
   * A JSON payload the run sees as `ctx.request.data` (plain JSON, at most
   * {@link MAX_RUN_REQUEST_DATA_BYTES} as UTF-8). Default `null`.
   */
  data?: JsonValue;
  /**
   * Why (at most `MAX_AUDIT_NOTE_LENGTH` characters): kept in the audit log entry of the request
   * by stores that keep one (`listAudit`), ignored by others. Default none.
   */
  note?: string | null;
}

/** Most bytes of a run request's `data`, as UTF-8 JSON: 64 KiB. */
export const MAX_RUN_REQUEST_DATA_BYTES = 64 * 1024;

/**
 * How long a take holds a run request by default ({@link TakeRunRequestsOptions.leaseMs}): a
 * taker that dies, is frozen or loses the take's reply leaves the request to another instance
 * after this long (plus that instance's next poll).
 */
export const RUN_REQUEST_TAKE_MS = 30_000;

/**
 * How long a store keeps a decided request (so a taker whose decision's reply was lost can ask
 * again and get the same answer, and `getRunRequest` can show it): at least this long; a store
 * collects older decided requests when it likes (at a take, for instance).
 */
export const DECIDED_RUN_REQUEST_KEEP_MS = 60 * 60 * 1000;

/** A request to run a job once, fleet-wide. */
export interface RunRequest {
  /** Unique id (a UUID). */
  id: string;
  job: string;
  requestedBy: string;
  /** When it was requested, epoch ms (store clock where it has one). */
  requestedAt: number;
  /** The payload (`ctx.request.data`); `null` when none was given. */
  data: JsonValue;
}

/** Options of {@link FleetStore.takeRunRequests}. */
export interface TakeRunRequestsOptions {
  /** How long this take holds each request it returns, ms. Default {@link RUN_REQUEST_TAKE_MS}. */
  leaseMs?: number;
}

/** A run request held by one take ({@link FleetStore.takeRunRequests}). */
export interface TakenRunRequest extends RunRequest {
  /** This take's token (a fresh UUID per take): only this take can decide or release the request. */
  takeId: string;
  /** Until when this take holds the request, epoch ms (store clock where it has one). */
  takenUntil: number;
  /** How many takes the request has had, this one included (1 on its first). */
  takes: number;
}

/** What a taker tells the store when it decides a request ({@link FleetStore.decideRunRequest}). */
export interface RunRequestDecision {
  /** The manual fire the request became: its identity (fire time, epoch ms) on the job's lock key. */
  fireAt: number;
  /** The instance that decided it. */
  instanceId: string;
}

/** Where a run request is ({@link FleetStore.getRunRequest}). */
export interface RunRequestState extends RunRequest {
  /**
   * `pending`: never taken, released, or its take's lease ended (any instance may take it);
   * `taken`: a take holds it until `takenUntil`; `decided`: a take decided it (it became the
   * manual fire `fireAt`, run or recorded skipped there) and no take returns it again.
   */
  state: 'pending' | 'taken' | 'decided';
  /** How many takes it has had. */
  takes: number;
  /** The instance of the last take; `null` before the first. */
  takenBy: string | null;
  /** Until when the last take holds it, epoch ms; `null` before the first take or once released. */
  takenUntil: number | null;
  /** When it was decided, epoch ms (store clock); `null` while not decided. */
  decidedAt: number | null;
  /** The manual fire it became; `null` while not decided. */
  fireAt: number | null;
  /** The instance that decided it; `null` while not decided. */
  decidedBy: string | null;
}

/** Options of `setPaused` (who asked, and why). */
export interface PauseOptions {
  /**
   * Who paused or resumed, stored as `pausedBy` (and as the audit entry's `by`): at most
   * `MAX_ACTOR_LENGTH` characters. Default `null` (unknown).
   */
  by?: string | null;
  /**
   * Why (at most `MAX_AUDIT_NOTE_LENGTH` characters): kept in the audit log entry by stores that
   * keep one (`listAudit`), ignored by others. Default none.
   */
  note?: string | null;
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
  /** Stores a run request (built with {@link newRunRequest}); any instance defining the job may take it. */
  requestRun(input: RunRequestInput): Promise<RunRequest>;
  /**
   * Takes the requests for `jobs` that no take holds: never taken, released, or whose take's
   * lease has ended (`takenUntil` ≤ the store's now), and not decided; oldest first. Each is
   * returned with a fresh `takeId`, `takenUntil` = now + `leaseMs` and `takes` + 1, and is held
   * by this take alone: however many take at once, no two takes hold a request at the same time.
   * A held request is decided by its taker ({@link decideRunRequest}), given back
   * ({@link releaseRunRequest}), or taken again by anyone once the lease ends. `instanceId` is
   * the taker (kept as `takenBy`). Stores without `decideRunRequest` (written before exactly-once
   * requests) remove what they return: at most once.
   */
  takeRunRequests(
    jobs: readonly string[],
    instanceId: string,
    options?: TakeRunRequestsOptions,
  ): Promise<RunRequest[] | TakenRunRequest[]>;
  /**
   * Decides a held request: its taker calls this once the request's manual fire has a claim
   * answer that settles it (won: before the run; `busy`: before its `skipped` row). Atomic: it
   * answers `true` and marks the request decided (`decidedAt` store now, `fireAt`, `decidedBy`)
   * only while the request is not decided and `takeId` is its current take, whether or not the
   * take's lease has ended (no other take replaced it); `true` again when this same take already
   * decided it (a retry after a lost reply); `false` otherwise (another take holds or decided it,
   * or the id is unknown). A decided request is kept at least {@link DECIDED_RUN_REQUEST_KEEP_MS}.
   * With the lock's one winner per fire identity, this makes a request run at most once; with
   * takes that end, at least once.
   */
  decideRunRequest?(id: string, takeId: string, decision: RunRequestDecision): Promise<boolean>;
  /**
   * Gives a held request back before its lease ends (its taker stops, no longer has the job, or
   * could not claim a manual fire for it): any instance may take it at once. Only while `takeId`
   * is its current take and it is not decided; a no-op otherwise (also for an unknown id).
   * Stores with push (`watchRunRequests`) announce it like a new request. The released take
   * stays current until another take replaces it (so it could still decide; its scheduler never
   * does once it gave the request back).
   */
  releaseRunRequest?(id: string, takeId: string): Promise<void>;
  /** Where a request is, or `null` for an unknown id (or a decided one already collected). */
  getRunRequest?(id: string): Promise<RunRequestState | null>;
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

/**
 * Checks a run request's input and builds the request (fresh UUID) at `now`.
 *
 * @throws InvalidOptionError naming the field (`job`, `requestedBy`, `note`, `data` or a path
 *   inside it). The `note` is checked here (bad input stores nothing) but not part of the request.
 */
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
  boundActor('requestedBy', input.requestedBy);
  checkAuditNote(input.note);
  const data =
    input.data === undefined ? null : checkJsonData(input.data, 'data', MAX_RUN_REQUEST_DATA_BYTES);
  return {
    ...{ id: randomUUID(), job: input.job, requestedBy: input.requestedBy, requestedAt: now },
    data,
  };
}

/** Whether `store` decides run requests (exactly once); without it a take removes them. */
export function decidesRunRequests(
  store: FleetStore,
): store is FleetStore & Required<Pick<FleetStore, 'decideRunRequest' | 'releaseRunRequest'>> {
  return (
    typeof store.decideRunRequest === 'function' && typeof store.releaseRunRequest === 'function'
  );
}

/** Whether a taken request carries a take (a store that decides requests returned it). */
export function isTakenRunRequest(
  request: RunRequest | TakenRunRequest,
): request is TakenRunRequest {
  return typeof (request as TakenRunRequest).takeId === 'string';
}

/**
 * The `state` of a stored request (for {@link FleetStore.getRunRequest}): `decided` once it has a
 * `decidedAt`; `taken` while its last take's lease runs at `now` (store clock); else `pending`.
 */
export function runRequestPhase(
  request: { decidedAt: number | null; takenUntil: number | null },
  now: number,
): RunRequestState['state'] {
  if (request.decidedAt !== null) return 'decided';
  return request.takenUntil !== null && request.takenUntil > now ? 'taken' : 'pending';
}

/**
 * The lease of a take: `options.leaseMs`, default {@link RUN_REQUEST_TAKE_MS}.
 *
 * @throws InvalidOptionError (`leaseMs`) unless a positive integer of milliseconds.
 */
export function takeLeaseMs(options: TakeRunRequestsOptions | undefined): number {
  const leaseMs = options?.leaseMs ?? RUN_REQUEST_TAKE_MS;
  if (!Number.isSafeInteger(leaseMs) || leaseMs <= 0) {
    throw new InvalidOptionError(
      'leaseMs',
      `must be a positive integer number of milliseconds, got ${String(leaseMs)}.`,
    );
  }
  return leaseMs;
}
