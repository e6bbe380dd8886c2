import { checkActor, checkAuditNote } from '../audit/audit-input.js';
import { type AuditPage, type AuditQuery, keepsAudit } from '../audit/audit-log.js';
import { AuditNotKeptError } from '../audit/audit-not-kept-error.js';
import { type Clock, realClock } from '../clock.js';
import { InvalidOptionError, UnknownJobError } from '../errors.js';
import type { Lock } from '../lock.js';
import {
  type ExclusionSpec,
  type FleetStore,
  hasFleetControl,
  type LiveInstance,
  type RunRequest,
  type RunRequestState,
  type TriggerSpec,
} from '../registry.js';
import { type JsonValue, type StoredSchedule, scheduleJobName } from '../schedules/schedule.js';
import {
  type CreateScheduleInput,
  type ScheduleActor,
  ScheduleClient,
  type SchedulePatch,
} from '../schedules/schedule-client.js';
import type { SchedulePage, ScheduleQuery } from '../schedules/schedule-store.js';
import { type FireGroup, groupFires } from '../shards/fire-groups.js';
import type { HistoryPage, JobState, RunStatus, Store } from '../store.js';
import { type DefinitionInForce, definitionsInForce } from './definitions-in-force.js';
import { type DefinitionGroup, definitionGroups } from './drift.js';
import { type UpcomingFire, upcomingFires } from './upcoming-fires.js';

export { MAX_ACTOR_LENGTH } from '../audit/audit-input.js';

/** Options of {@link FleetClient}. */
export interface FleetClientOptions {
  /** The fleet's Store. It must implement fleet control (every built-in store does). */
  store: Store;
  /** The fleet's Lock, optional: only its `backend` name is shown today. */
  lock?: Lock;
  /** Time source of "next fires". Default: the real clock. */
  clock?: Clock;
  /** How many next fires per job. Default 5. */
  nextFireCount?: number;
}

/** Who performs an action from a {@link FleetClient}, and why. */
export interface ActorOptions {
  /**
   * Who asked (user name, `cli`, `admin:alice`): stored with the pause or the run request and in
   * the audit log. At most `MAX_ACTOR_LENGTH` (200) characters, no control characters.
   */
  by: string;
  /**
   * Why (at most `MAX_AUDIT_NOTE_LENGTH`, 1,000 characters): kept in the audit log entry. A store
   * without an audit log ({@link FleetClient.keepsAudit} `false`) keeps no note.
   */
  note?: string | null;
}

/** Options of {@link FleetClient.requestRun}: who asks, and the run's payload. */
export interface RunRequestOptions extends ActorOptions {
  /**
   * JSON the run sees as `ctx.request.data` (plain JSON, at most 64 KiB as UTF-8). Default
   * `null`.
   */
  data?: JsonValue;
}

/** One job in the {@link FleetView}. */
export interface FleetJob {
  name: string;
  /** Trigger description of the majority definition, `null` when no live instance defines it. */
  trigger: string | null;
  /** Trigger spec of the majority definition, `null` for custom triggers or undefined jobs. */
  spec: TriggerSpec | null;
  /**
   * Next fires of the majority definition, in UTC and the job's zone (empty when unknown); a fire
   * its `exclude` calendar excludes is listed with `excluded: reason`.
   */
  nextFires: UpcomingFire[];
  /** The majority definition's `exclude` calendar (description and spec), `null` when none. */
  exclude: ExclusionSpec | null;
  /** Live instances defining the job, sorted. */
  definedBy: string[];
  paused: boolean;
  pausedBy: string | null;
  pausedAt: number | null;
  lastStatus: RunStatus | null;
  lastFireAt: number | null;
  lastFinishedAt: number | null;
  /** `true` when live instances disagree on the definition hash. */
  drift: boolean;
  /**
   * Instances per definition hash, majority first (one entry without drift, none undefined),
   * each with the fire times it is in force for during a rolling deploy (`from` / `until`,
   * epoch ms; `null` when open): see `definitionsInForce`.
   */
  definitions: Array<
    Omit<DefinitionGroup, 'job'> & {
      trigger: string;
      inForce: { from: number | null; until: number | null };
    }
  >;
}

/** What {@link FleetClient.fleet} returns. */
export interface FleetView {
  /** When the view was computed (client clock), epoch ms. */
  at: number;
  /** Store and lock backend names. */
  backends: { store: string; lock: string | null };
  /** Live instances, by id (with `clock` offset/rtt when measured). */
  instances: LiveInstance[];
  /** Every job defined by a live instance or known to the store (paused, with history), by name. */
  jobs: FleetJob[];
  /** Names of drifting jobs. */
  drift: string[];
}

/** A stored schedule with the live instances that serve it ({@link FleetClient.schedules}). */
export interface FleetSchedule extends StoredSchedule {
  /** Live instances whose registry record holds its job `schedule:<id>`, sorted. */
  servedBy: string[];
  /** Enabled, but no live instance serves it (no instance has its handler, or all refused it). */
  unserved: boolean;
}

/** What {@link FleetClient.schedules} returns. */
export interface FleetSchedulePage {
  schedules: FleetSchedule[];
  nextCursor: string | null;
}

/** A page of history with its rows grouped into fires ({@link FleetClient.history}). */
export interface FleetHistoryPage extends HistoryPage {
  /** The page's executions grouped by fire: a sharded fire is one group with its parts. */
  fires: FireGroup[];
}

/** Options of {@link FleetClient.history}. */
export interface FleetHistoryQuery {
  limit?: number;
  cursor?: string | null;
  /** Only these statuses. */
  status?: RunStatus | readonly RunStatus[] | null;
}

/** Checks who asks (`checkActor`) and the note (`checkAuditNote`); returns both. */
function assertActor(
  options: ActorOptions | undefined,
  action: string,
): { by: string; note: string | null } {
  const by = options?.by;
  if (typeof by !== 'string' || by.trim() === '') {
    throw new InvalidOptionError(
      'by',
      `${action}() must say who asks: pass { by: 'alice' } (a non-empty string).`,
    );
  }
  return { by: checkActor('by', by), note: checkAuditNote(options?.note) };
}

function assertJobName(job: unknown): asserts job is string {
  if (typeof job !== 'string' || job === '') {
    throw new InvalidOptionError('job', 'must be the non-empty name of a job.');
  }
}

/**
 * Sees and steers a fleet from any process, given its Store (and optionally its Lock), without
 * registering any job: the admin console and the CLI are built on it.
 */
export class FleetClient {
  private readonly store: Store & FleetStore;
  private readonly lock: Lock | null;
  private readonly clock: Clock;
  private readonly nextFireCount: number;
  private scheduleClient: ScheduleClient | null = null;

  /** @throws InvalidOptionError (field `store`) when the store lacks fleet control. */
  constructor(options: FleetClientOptions) {
    const store = options?.store;
    if (typeof store !== 'object' || store === null || !hasFleetControl(store)) {
      throw new InvalidOptionError(
        'store',
        'must be a Store with fleet control (heartbeat, instances, leave, requestRun, takeRunRequests, listJobs); every built-in store has them, upgrade a custom store.',
      );
    }
    this.store = store;
    this.lock = options.lock ?? null;
    this.clock = options.clock ?? realClock;
    this.nextFireCount = options.nextFireCount ?? 5;
    if (!Number.isSafeInteger(this.nextFireCount) || this.nextFireCount < 0) {
      throw new InvalidOptionError('nextFireCount', 'must be a non-negative integer.');
    }
  }

  /** The fleet view: live instances, jobs fleet-wide with next fires, paused, last outcome, drift. */
  async fleet(): Promise<FleetView> {
    const [instances, states] = await Promise.all([this.store.instances(), this.store.listJobs()]);
    const now = this.clock.now();
    const stateByName = new Map(states.map((s) => [s.job, s]));
    const names = new Set([
      ...instances.flatMap((i) => i.jobs.map((j) => j.name)),
      ...stateByName.keys(),
    ]);
    const inForce = definitionsInForce(instances);
    const jobs = [...names]
      .sort()
      .map((name) =>
        this.jobView(name, instances, inForce.get(name) ?? [], stateByName.get(name), now),
      );
    return {
      at: now,
      backends: { store: this.store.backend, lock: this.lock?.backend ?? null },
      instances,
      jobs,
      drift: jobs.filter((j) => j.drift).map((j) => j.name),
    };
  }

  /**
   * One page of a job's history, newest first, optionally only some statuses; `fires` groups the
   * page's rows into fires (a sharded fire is one fire with its parts, see `groupFires`).
   */
  async history(job: string, query: FleetHistoryQuery = {}): Promise<FleetHistoryPage> {
    assertJobName(job);
    const page = await this.store.history(job, query);
    return { ...page, fires: groupFires(page.executions) };
  }

  /**
   * Pauses the job fleet-wide (fires are claimed and recorded `skipped`, not run); a store that
   * keeps an audit log records a `pause` entry with `by` and `note` in the same atomic step.
   */
  async pause(job: string, options: ActorOptions): Promise<void> {
    assertJobName(job);
    await this.store.setPaused(job, true, assertActor(options, 'pause'));
  }

  /** Resumes the job fleet-wide (a `resume` audit entry, as {@link pause}). */
  async resume(job: string, options: ActorOptions): Promise<void> {
    assertJobName(job);
    await this.store.setPaused(job, false, assertActor(options, 'resume'));
  }

  /**
   * Whether the store keeps an audit log (`listAudit`: every built-in store of this version). A
   * store without one keeps no record of who paused, ran or changed what, and no notes.
   */
  get keepsAudit(): boolean {
    return keepsAudit(this.store);
  }

  /**
   * One page of the audit log, newest first: who paused, resumed, ran or changed what, when, and
   * why (`job`, `action`, `before` filter; `cursor` pages).
   *
   * @throws AuditNotKeptError (`AUDIT_NOT_KEPT`) when the store keeps no audit log.
   * @throws InvalidOptionError for a bad query.
   */
  async audit(query?: AuditQuery): Promise<AuditPage> {
    if (!keepsAudit(this.store)) throw new AuditNotKeptError(this.store.backend);
    return this.store.listAudit(query);
  }

  /**
   * Asks the fleet to run the job once now; an instance defining it takes the request (within
   * about a second) and records the run with `requestedBy`; the run sees `ctx.request`
   * (`{ id, by, data }`). With a store that decides requests (every built-in store) it runs
   * exactly once: a taker that dies, stops or loses the take's reply leaves it to another
   * instance after `runRequestLeaseMs`. {@link runRequest} shows where it is.
   *
   * @throws UnknownJobError (`UNKNOWN_JOB`) when no live instance defines the job.
   * @throws InvalidOptionError (`data`) when `data` is not plain JSON or over 64 KiB.
   */
  async requestRun(job: string, options: RunRequestOptions): Promise<RunRequest> {
    assertJobName(job);
    const { by, note } = assertActor(options, 'requestRun');
    const instances = await this.store.instances();
    if (!instances.some((i) => i.jobs.some((j) => j.name === job))) {
      throw new UnknownJobError(
        job,
        'job',
        `no live instance defines a job named ${JSON.stringify(job)}; start one that does, or check the name.`,
      );
    }
    const data = options.data;
    return this.store.requestRun({
      ...{ job, requestedBy: by },
      ...(data === undefined ? {} : { data }),
      ...(note === null ? {} : { note }),
    });
  }

  /**
   * Where a run request is (`pending`, `taken`, `decided` with the manual fire it became), or
   * `null` for an unknown id (or a decided one collected after an hour).
   *
   * @throws InvalidOptionError (`store`) for a store that does not decide run requests.
   */
  async runRequest(id: string): Promise<RunRequestState | null> {
    if (typeof this.store.getRunRequest !== 'function') {
      throw new InvalidOptionError(
        'store',
        'does not decide run requests (no getRunRequest): its requests are at most once and cannot be looked up; every built-in store can.',
      );
    }
    return this.store.getRunRequest(id);
  }

  /**
   * Stores a new schedule (checked in full first: a typed error naming the field stores
   * nothing), version 1, `createdBy`/`updatedBy` = `by`. Every instance serving its handler adds
   * it within about a second. @throws DuplicateScheduleError (`DUPLICATE_SCHEDULE`).
   */
  createSchedule(input: CreateScheduleInput, actor: ScheduleActor): Promise<StoredSchedule> {
    return this.scheduleOps().create(input, actor);
  }

  /**
   * Changes a schedule: the fields of `patch` replace the stored ones (`options` merged key by
   * key, `null` removes one), if it is still at `actor.expectedVersion` (required).
   * @throws ScheduleConflictError (`SCHEDULE_CONFLICT`) when someone changed it since;
   *   UnknownScheduleError (`UNKNOWN_SCHEDULE`).
   */
  updateSchedule(id: string, patch: SchedulePatch, actor: ScheduleActor): Promise<StoredSchedule> {
    return this.scheduleOps().update(id, patch, actor);
  }

  /** Enables a schedule (at `expectedVersion` when given, else at its current version). */
  enableSchedule(id: string, actor: ScheduleActor): Promise<StoredSchedule> {
    return this.scheduleOps().setEnabled(id, true, actor);
  }

  /** Disables a schedule: kept, but no instance serves it (within about a second). */
  disableSchedule(id: string, actor: ScheduleActor): Promise<StoredSchedule> {
    return this.scheduleOps().setEnabled(id, false, actor);
  }

  /** Removes a schedule (at `expectedVersion` when given); resolves it as it was. */
  removeSchedule(id: string, actor: ScheduleActor): Promise<StoredSchedule> {
    return this.scheduleOps().remove(id, actor);
  }

  /** The stored schedule, or `null` when there is none. */
  getSchedule(id: string): Promise<StoredSchedule | null> {
    return this.scheduleOps().get(id);
  }

  /** One page of stored schedules by id (`handler` filters, `cursor` pages). */
  listSchedules(query?: ScheduleQuery): Promise<SchedulePage> {
    return this.scheduleOps().list(query);
  }

  /**
   * One page of stored schedules (as {@link listSchedules}) with the live instances serving
   * each, from the registry (up to one heartbeat old: a schedule created a moment ago reads as
   * unserved until the instances serving it have heartbeated).
   */
  async schedules(query?: ScheduleQuery): Promise<FleetSchedulePage> {
    const [page, instances] = await Promise.all([
      this.scheduleOps().list(query),
      this.store.instances(),
    ]);
    const servers = new Map<string, string[]>();
    for (const instance of instances) {
      for (const job of instance.jobs) {
        const list = servers.get(job.name) ?? [];
        list.push(instance.instanceId);
        servers.set(job.name, list);
      }
    }
    return {
      nextCursor: page.nextCursor,
      schedules: page.schedules.map((schedule) => {
        const servedBy = [...(servers.get(scheduleJobName(schedule.id)) ?? [])].sort();
        return { ...schedule, servedBy, unserved: schedule.enabled && servedBy.length === 0 };
      }),
    };
  }

  /** @throws InvalidOptionError (field `store`) when the store keeps no stored schedules. */
  private scheduleOps(): ScheduleClient {
    this.scheduleClient ??= new ScheduleClient(this.store);
    return this.scheduleClient;
  }

  private jobView(
    name: string,
    instances: readonly LiveInstance[],
    windows: readonly DefinitionInForce[],
    state: JobState | undefined,
    now: number,
  ): FleetJob {
    const groups = definitionGroups(instances, name);
    const window = (hash: string) => windows.find((w) => w.hash === hash);
    // the definition in force now (the majority's when the fleet agrees)
    const current = groups.find((g) => inForceAt(window(g.hash), now))?.job ?? groups[0]?.job;
    const shown = current ?? null;
    return {
      name,
      trigger: shown?.trigger ?? null,
      spec: shown?.spec ?? null,
      nextFires: this.nextFiresOf(groups, windows, now),
      exclude: shown?.exclude ?? null,
      definedBy: groups.flatMap((g) => g.instances).sort(),
      paused: state?.paused ?? false,
      pausedBy: state?.pausedBy ?? null,
      pausedAt: state?.pausedAt ?? null,
      lastStatus: state?.lastStatus ?? null,
      lastFireAt: state?.lastFireAt ?? null,
      lastFinishedAt: state?.lastFinishedAt ?? null,
      drift: groups.length > 1,
      definitions: groups.map((g) => {
        const w = window(g.hash);
        return {
          hash: g.hash,
          instances: g.instances,
          trigger: g.job.trigger,
          inForce: {
            from: w === undefined || !Number.isFinite(w.from) ? null : w.from,
            until: w === undefined || !Number.isFinite(w.until) ? null : w.until,
          },
        };
      }),
    };
  }

  /**
   * The job's next fires as the fleet will claim them: each definition's fires within the times
   * it is in force for (one definition during a rolling deploy, see `definitionsInForce`).
   */
  private nextFiresOf(
    groups: readonly DefinitionGroup[],
    windows: readonly DefinitionInForce[],
    now: number,
  ): UpcomingFire[] {
    const fires: UpcomingFire[] = [];
    for (const w of windows) {
      if (w.until <= now || fires.length >= this.nextFireCount) continue;
      const job = groups.find((g) => g.hash === w.hash)?.job;
      if (job === undefined) continue;
      const after = Math.max(now, w.from - 1);
      for (const fire of upcomingFires(job, after, this.nextFireCount - fires.length)) {
        if (fire.at < w.until) fires.push(fire);
      }
    }
    return fires;
  }
}

/** Whether `window` covers the fire time `at` (no window: not known to be in force). */
function inForceAt(window: DefinitionInForce | undefined, at: number): boolean {
  return window !== undefined && window.from <= at && at < window.until;
}
