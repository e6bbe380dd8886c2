/**
 * One fleet instance on a SQLite file, as the process-based demos run it (`pnpm demo`'s child
 * processes, the `node:cluster` example's workers): a `Scheduler` with `SqliteLock` and
 * `SqliteStore` on the same file, one job, and a report of each run to the caller.
 */
import {
  every,
  type FleetcronEvent,
  offsetClock,
  realClock,
  Scheduler,
  subscribe,
} from '@fleetcron/core';
import { SqliteLock } from '@fleetcron/lock-sqlite';
import { SqliteStore } from '@fleetcron/store-sqlite';

/** The job every demo instance registers. */
export const DEMO_JOB = 'demo-job';

/** What an instance reports about one run it started. */
export interface RunReport {
  fireAt: number;
  instanceId: string;
  pid: number;
  token: number;
  /** What the instance's (skewed) clock read when the run started. */
  clockRead: number;
}

/** Claim answers an instance saw, by outcome. */
export interface ClaimCounts {
  won: number;
  lost: number;
  busy: number;
  failed: number;
}

/** Options of {@link startSqliteInstance}. */
export interface SqliteInstanceOptions {
  file: string;
  instanceId: string;
  /** How far this instance's clock is off, ms (the lock still judges time by the host's clock). */
  offsetMs?: number;
  everyMs: number;
  onRun(report: RunReport): void;
}

/** A running instance. `stop()` drains the scheduler and closes the lock and store. */
export interface SqliteInstance {
  claims: ClaimCounts;
  stop(): Promise<void>;
}

/** Starts one instance; resolves once its lock and store are open (tables created). */
export async function startSqliteInstance(options: SqliteInstanceOptions): Promise<SqliteInstance> {
  const lock = new SqliteLock(options.file);
  const store = new SqliteStore(options.file);
  await Promise.all([lock.open(), store.open()]);
  const claims: ClaimCounts = { won: 0, lost: 0, busy: 0, failed: 0 };
  const unsubscribe = subscribe((e: FleetcronEvent) => {
    if (e.instanceId !== options.instanceId) return;
    if (e.type === 'claim.won') claims.won++;
    else if (e.type === 'claim.lost') claims.lost++;
    else if (e.type === 'claim.busy') claims.busy++;
    else if (e.type === 'claim.failed') claims.failed++;
  });
  const clock = offsetClock(realClock, options.offsetMs ?? 0);
  const scheduler = new Scheduler({
    lock,
    store,
    clock,
    instanceId: options.instanceId,
    drainMs: 5000,
  });
  scheduler.add({
    name: DEMO_JOB,
    trigger: every(options.everyMs),
    // see fleet-demo.ts: skewed clocks make different fires coincide; each gets its own lease
    overlap: 'allow',
    run: async (ctx) => {
      options.onRun({
        fireAt: ctx.fireAt.getTime(),
        instanceId: ctx.instanceId,
        pid: process.pid,
        token: ctx.token,
        clockRead: ctx.clock.now(),
      });
      await ctx.clock.sleep(50, ctx.signal); // a little work
    },
  });
  scheduler.start();
  return {
    claims,
    async stop() {
      await scheduler.stop();
      unsubscribe();
      await Promise.all([lock.close(), store.close()]);
    },
  };
}
