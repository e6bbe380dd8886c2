import { type Clock, realClock, type TimerHandle } from '../clock.js';
import { InvalidOptionError, toError } from '../errors.js';
import type { Logger } from '../logger.js';
import { silentLogger } from '../logger.js';
import type { Scheduler } from '../scheduler/scheduler.js';
import type { Store } from '../store.js';
import { assertPositiveMs } from '../validate.js';
import { type StoredSchedule, scheduleJobName } from './schedule.js';
import {
  type NormalizedHandler,
  normalizeHandlers,
  type ScheduleHandler,
  type ScheduleRun,
} from './schedule-handler.js';
import { scheduleJob } from './schedule-job.js';
import { hasSchedules, type ScheduleChange, type ScheduleStore } from './schedule-store.js';

/** Default full-resync interval of a store without push, ms. */
export const DEFAULT_SCHEDULE_POLL_MS = 1_000;
/** Default full-resync interval of a store with push (a backstop), ms. */
export const DEFAULT_SCHEDULE_RESYNC_MS = 60_000;

/** Options of {@link ScheduleServer}. */
export interface ScheduleServerOptions {
  /** The scheduler that runs the schedules' fires (one job per served schedule). */
  scheduler: Scheduler;
  /** Where the schedules are stored: a Store with the schedule methods (memory, PostgreSQL). */
  store: Store;
  /** The handlers this instance serves, by the name stored schedules give. */
  handlers: Record<string, ScheduleHandler | ScheduleRun>;
  /** Clock of the poll and resync timers. Default: the real clock (tests pass a FakeClock). */
  clock?: Clock;
  /** Full resync interval when the store has no push (`watchSchedules`), ms. Default 1,000. */
  pollMs?: number;
  /** Full resync interval when the store has push, ms (a backstop). Default 60,000. */
  resyncMs?: number;
  /** Where sync failures and refused schedules are logged. Default: silent. */
  logger?: Logger;
}

/** A stored schedule this server serves, as {@link ScheduleServer.served} lists it. */
export interface ServedSchedule {
  id: string;
  handler: string;
  version: number;
  /** The Scheduler job's name (`schedule:<id>`). */
  job: string;
}

/** A stored schedule this server could not add (e.g. a lease below the lock's minimum). */
export interface RefusedSchedule {
  id: string;
  version: number;
  error: Error;
}

/**
 * Serves stored schedules on one instance: for every enabled schedule whose handler it has, it
 * adds one job to the Scheduler (`schedule:<id>`, the run sees `ctx.schedule`), and keeps the
 * jobs equal to the store: creates, edits, disables and removes apply within about a second
 * (on the store's push where it has one, else by polling every `pollMs`), and a full resync
 * runs at start, on the store's `resync` (after its push connection came back), every
 * `resyncMs`, and after a failed read. Store failures never throw out of it (logged; retried).
 *
 * Start it before the scheduler (`await server.start(); scheduler.start()`) so the schedules'
 * catch-up runs at the scheduler's start like a code-defined job's.
 */
export class ScheduleServer {
  private readonly scheduler: Scheduler;
  private readonly store: Store & ScheduleStore;
  private readonly handlers: Map<string, NormalizedHandler>;
  private readonly clock: Clock;
  private readonly log: Logger;
  private readonly pollMs: number;
  private readonly resyncMs: number;
  private readonly applied = new Map<string, ServedSchedule>();
  private readonly refused = new Map<string, RefusedSchedule>();
  /** Work is serial: one read-and-apply at a time, in order. */
  private work: Promise<void> = Promise.resolve();
  private readonly dirty = new Set<string>();
  private fullPending = false;
  private timer: TimerHandle | null = null;
  /** When `timer` fires, on the clock's monotonic time. */
  private timerAt = 0;
  private unwatch: (() => void) | null = null;
  private running = false;

  /** Validates `options` (typed errors naming the field); reads nothing until `start()`. */
  constructor(options: ScheduleServerOptions) {
    const store = options?.store;
    if (typeof store !== 'object' || store === null || !hasSchedules(store)) {
      throw new InvalidOptionError(
        'store',
        'must be a Store with stored schedules (createSchedule, replaceSchedule, removeSchedule, getSchedule, listSchedules): any built-in store of this version (MemoryStore, PostgresStore, RedisStore, EtcdStore, SqliteStore).',
      );
    }
    const scheduler = options.scheduler;
    if (typeof scheduler?.add !== 'function' || typeof scheduler.remove !== 'function') {
      throw new InvalidOptionError('scheduler', 'must be a Scheduler.');
    }
    this.scheduler = scheduler;
    this.store = store;
    this.handlers = normalizeHandlers(options.handlers);
    this.clock = options.clock ?? realClock;
    this.log = options.logger ?? silentLogger;
    this.pollMs = options.pollMs ?? DEFAULT_SCHEDULE_POLL_MS;
    this.resyncMs = options.resyncMs ?? DEFAULT_SCHEDULE_RESYNC_MS;
    assertPositiveMs('pollMs', this.pollMs);
    assertPositiveMs('resyncMs', this.resyncMs);
  }

  /**
   * Subscribes to the store's changes and loads every schedule of the served handlers once (the
   * returned promise settles when that first load was applied, or failed: then it is retried).
   * A no-op while running.
   */
  async start(): Promise<void> {
    if (this.running) return;
    this.running = true;
    this.unwatch = this.store.watchSchedules?.((change) => this.onChange(change)) ?? null;
    await this.resync();
  }

  /** Stops following the store and removes the jobs it added (runs in progress finish). */
  async stop(): Promise<void> {
    if (!this.running) return;
    this.running = false;
    this.unwatch?.();
    this.unwatch = null;
    if (this.timer) this.clock.clearTimer(this.timer);
    this.timer = null;
    await this.work;
    for (const served of this.applied.values()) this.scheduler.remove(served.job);
    this.applied.clear();
    this.refused.clear();
  }

  /** Reads every schedule of the served handlers and applies the differences. */
  resync(): Promise<void> {
    this.fullPending = true;
    return this.enqueue();
  }

  /** The stored schedules served here (a job added for each), by id. */
  served(): ServedSchedule[] {
    return [...this.applied.values()].sort((a, b) => (a.id < b.id ? -1 : 1));
  }

  /** Stored schedules of served handlers that the scheduler refused, with the error, by id. */
  refusedSchedules(): RefusedSchedule[] {
    return [...this.refused.values()].sort((a, b) => (a.id < b.id ? -1 : 1));
  }

  private onChange(change: ScheduleChange): void {
    if (!this.running) return;
    if (change.kind === 'resync') this.fullPending = true;
    else this.dirty.add(change.id);
    void this.enqueue();
  }

  /** Runs the pending reads after the current one; resolves when they were applied. Never rejects. */
  private enqueue(): Promise<void> {
    this.work = this.work
      .then(() => this.drain())
      .catch((error: unknown) => {
        this.log.error('fleetcron: applying stored schedules failed; a full resync follows', {
          error: toError(error),
        });
        this.plan(this.pollMs, true);
      });
    return this.work;
  }

  private async drain(): Promise<void> {
    if (!this.running) return;
    if (this.fullPending) {
      this.fullPending = false;
      this.dirty.clear(); // the full read covers them
      await this.readAll();
    }
    const ids = [...this.dirty];
    this.dirty.clear();
    for (const id of ids) await this.readOne(id);
  }

  private async readAll(): Promise<void> {
    const found = new Map<string, StoredSchedule>();
    try {
      for (const handler of this.handlers.keys()) {
        let cursor: string | null = null;
        do {
          const page = await this.store.listSchedules({ handler, cursor, limit: 1_000 });
          for (const schedule of page.schedules) found.set(schedule.id, schedule);
          cursor = page.nextCursor;
        } while (cursor !== null);
      }
    } catch (error) {
      this.log.warn('fleetcron: reading the stored schedules failed; retrying', {
        error: toError(error),
      });
      this.plan(this.pollMs, true);
      return;
    }
    if (!this.running) return;
    for (const schedule of found.values()) this.apply(schedule.id, schedule);
    for (const id of [...this.applied.keys(), ...this.refused.keys()]) {
      if (!found.has(id)) this.apply(id, null);
    }
    this.plan(this.store.watchSchedules ? this.resyncMs : this.pollMs, false);
  }

  private async readOne(id: string): Promise<void> {
    let schedule: StoredSchedule | null;
    try {
      schedule = await this.store.getSchedule(id);
    } catch (error) {
      this.log.warn('fleetcron: reading a changed schedule failed; a full resync follows', {
        id,
        error: toError(error),
      });
      this.plan(this.pollMs, true);
      return;
    }
    if (this.running) this.apply(id, schedule);
  }

  /** Makes the scheduler's job for `id` match `schedule` (`null`: gone). */
  private apply(id: string, schedule: StoredSchedule | null): void {
    const served = this.applied.get(id);
    const refused = this.refused.get(id);
    const handler = schedule?.enabled ? this.handlers.get(schedule.handler) : undefined;
    const known = served?.version ?? refused?.version;
    if (schedule && known !== undefined && schedule.version <= known) return; // not newer
    if (served) {
      this.scheduler.remove(served.job);
      this.applied.delete(id);
    }
    this.refused.delete(id);
    if (!schedule || !handler) return;
    try {
      const job = scheduleJob(schedule, handler);
      if (job === null) return; // ended before it took effect
      this.scheduler.add(job);
      this.applied.set(id, {
        id,
        handler: handler.name,
        version: schedule.version,
        job: scheduleJobName(id),
      });
    } catch (error) {
      const e = toError(error);
      this.refused.set(id, { id, version: schedule.version, error: e });
      this.log.error('fleetcron: a stored schedule could not be added; it is not served here', {
        id,
        version: schedule.version,
        error: e,
      });
    }
  }

  /** Sets the next full resync `ms` from now (`soon`: unless one is set earlier). */
  private plan(ms: number, soon: boolean): void {
    if (!this.running) return;
    const at = this.clock.monotonic() + ms;
    if (this.timer) {
      if (soon && this.timerAt <= at) return;
      this.clock.clearTimer(this.timer);
    }
    this.timerAt = at;
    this.timer = this.clock.setTimer(() => {
      this.timer = null;
      void this.resync();
    }, ms);
  }
}
