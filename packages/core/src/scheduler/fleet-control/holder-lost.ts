import type { Clock } from '../../clock.js';
import { toError } from '../../errors.js';
import type { Lock } from '../../lock.js';
import type { Logger } from '../../logger.js';
import type { LiveInstance } from '../../registry.js';
import { fireLockKey } from '../../shards/part-keys.js';
import type { Execution, Store } from '../../store.js';
import type { HistoryWriter } from '../fire/index.js';
import { safeCall } from '../fire/index.js';
import type { NormalizedJob } from '../job/index.js';
import type { TimerQueue } from '../timing/index.js';
import { settleWithin } from '../timing/index.js';

/** Most `running` rows of one job examined per sweep. */
export const HOLDER_LOST_SCAN = 50;

/**
 * Most jobs one sweep examines (each costs a history read): a scheduler with more jobs sweeps
 * them in turn, this many per heartbeat.
 */
export const HOLDER_LOST_JOBS_PER_SWEEP = 25;

/**
 * Most holder-lost checks that fires claimed here start between two heartbeats (each costs a
 * history read, so 10,000 jobs due together would send 10,000 reads beside their claims and
 * history writes, and starve them). Past it, a job waits for its turn in the heartbeat's sweep.
 */
export const HOLDER_LOST_CHECKS_PER_HEARTBEAT = 100;

/** Hands out the jobs to sweep, {@link HOLDER_LOST_JOBS_PER_SWEEP} per call, round robin. */
export function sweepRotation(): <T>(jobs: readonly T[]) => T[] {
  let cursor = 0;
  return <T>(jobs: readonly T[]): T[] => {
    if (jobs.length <= HOLDER_LOST_JOBS_PER_SWEEP) return [...jobs];
    const start = cursor % jobs.length;
    cursor = start + HOLDER_LOST_JOBS_PER_SWEEP;
    return Array.from(
      { length: HOLDER_LOST_JOBS_PER_SWEEP },
      (_, i) => jobs[(start + i) % jobs.length] as T,
    );
  };
}

/** Lock key of the claim that decides who handles a lost fire (one per history row). */
export function recoveryKey(rowId: string): string {
  return `fleetcron:holder-lost:${rowId}`;
}

/** What the holder-lost sweep needs. */
export interface HolderLostDeps {
  readonly lock: Lock;
  readonly store: Store;
  readonly history: HistoryWriter;
  readonly clock: Clock;
  readonly queue: TimerQueue;
  readonly instanceId: string;
  readonly log: Logger;
  /** Fire times of `job` this instance is handling now. */
  activeFires(job: string): number[];
  /** Re-runs a lost fire once (`onHolderLost: 'rerun'`), as a fire of its own. */
  rerun(job: NormalizedJob, lost: Execution): void;
}

/**
 * Finds fires whose holder died: a `running` history row whose instance is no longer live (or
 * is this instance, which no longer handles it) and whose lease is gone from the lock. One
 * instance handles each: it claims the row's recovery identity (a catch-up claim on
 * {@link recoveryKey}, which wins once, ever), records the row `lease_lost`, and with
 * `onHolderLost: 'rerun'` runs the job once more. Runs after each heartbeat. Never rejects.
 */
export async function sweepHolderLost(
  d: HolderLostDeps,
  jobs: readonly NormalizedJob[],
  instances: readonly LiveInstance[],
): Promise<void> {
  const live = new Set(instances.map((i) => i.instanceId));
  for (const job of jobs) {
    try {
      for (const row of await lostRows(d, job, live)) await handle(d, job, row);
    } catch (error) {
      d.log.warn('fleetcron: holder-lost sweep failed', { job: job.name, error: toError(error) });
    }
  }
}

function bounded<T>(
  d: HolderLostDeps,
  ms: number,
  what: string,
  call: () => Promise<T>,
): Promise<T> {
  return settleWithin(
    safeCall(call),
    ms,
    () => new Error(`${what}: no answer in ${ms} ms`),
    d.queue,
  );
}

/**
 * The `running` rows of `job` whose holder is gone (or is this instance, which no longer handles
 * the fire) and whose lease is not live, still `running` when read again after the inspect.
 */
async function lostRows(
  d: HolderLostDeps,
  job: NormalizedJob,
  live: ReadonlySet<string>,
): Promise<Execution[]> {
  const ms = job.leaseMs;
  const page = await bounded(d, ms, 'history', () =>
    d.store.history(job.name, { status: 'running', limit: HOLDER_LOST_SCAN }),
  );
  const active = new Set(d.activeFires(job.name));
  const orphans = page.executions.filter((row) =>
    row.instanceId === d.instanceId ? !active.has(row.fireAt) : !live.has(row.instanceId),
  );
  if (orphans.length === 0) return [];
  // a part of a sharded fire holds its lease on the part's own key
  const byKey = new Map<string, Execution[]>();
  for (const row of orphans) {
    const key = fireLockKey(job.name, row.shard, row.instanceId);
    byKey.set(key, [...(byKey.get(key) ?? []), row]);
  }
  const lost: Execution[] = [];
  for (const [key, rows] of byKey) {
    const { leases } = await bounded(d, ms, 'inspect', () => d.lock.inspect(key));
    const held = new Set(leases.map((l) => l.token));
    lost.push(...rows.filter((row) => row.token === null || !held.has(row.token)));
  }
  if (lost.length === 0) return [];
  // a run that ended since the first read wrote its outcome BEFORE releasing its lease (see
  // HeldLease.releaseAfter): read again, so only rows still `running` now count as lost
  const again = await bounded(d, ms, 'history', () =>
    d.store.history(job.name, { status: 'running', limit: HOLDER_LOST_SCAN }),
  );
  const running = new Set(again.executions.map((row) => row.id));
  return lost.filter((row) => running.has(row.id));
}

/** Claims the row's recovery identity; the winner records `lease_lost` and maybe re-runs. */
async function handle(d: HolderLostDeps, job: NormalizedJob, row: Execution): Promise<void> {
  if (d.lock.capabilities.durableMark === undefined) {
    await record(d, job, row); // no mark to decide who: every instance writes the same row
    return;
  }
  const answer = await bounded(d, job.leaseMs, 'claim', () =>
    d.lock.claim({
      key: recoveryKey(row.id),
      fireAt: row.fireAt,
      owner: d.instanceId,
      leaseMs: job.leaseMs,
      exclusive: false,
      catchUp: { since: row.fireAt },
    }),
  );
  if (answer.status !== 'won') return; // another instance handles it (or did)
  await bounded(d, job.leaseMs, 'release', () => d.lock.release(answer.lease)).catch(() => false);
  await record(d, job, row);
  if (job.onHolderLost === 'rerun') d.rerun(job, row);
}

async function record(d: HolderLostDeps, job: NormalizedJob, row: Execution): Promise<void> {
  const at = d.clock.now();
  const error = `holder ${row.instanceId} is gone and its lease expired with no outcome (noticed by ${d.instanceId})`;
  await d.history.write({ ...row, status: 'lease_lost', finishedAt: at, error }, job.leaseMs, (e) =>
    d.log.warn('fleetcron: could not record a lost fire', { job: job.name, error: e }),
  );
  d.log.warn('fleetcron: a fire whose holder died was recorded lease_lost', {
    ...{ job: job.name, id: row.id, holder: row.instanceId },
    fireAt: new Date(row.fireAt).toISOString(),
    rerun: job.onHolderLost === 'rerun',
  });
}
