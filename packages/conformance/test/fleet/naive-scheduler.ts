import type { JobContext, JobDefinition, Lease } from '@fleetcron/core';
import { silentLogger } from '@fleetcron/core';
import type { FleetInstanceDeps, FleetInstanceFactory } from '../../src/index.js';

/**
 * A mutant scheduler for the suite's self-test: claim → paused check → record `running` → run →
 * record the outcome → release, like the real one, but with no lease deadline at all (no renewal,
 * no deadline check, a signal that is never aborted). The freeze scenarios must fail on it.
 */
export const naiveInstance: FleetInstanceFactory = (deps) => {
  const timers = new Set<ReturnType<typeof setTimeout>>();
  const runs = new Set<Promise<void>>();
  let stopped = false;
  const schedule = (job: JobDefinition, after = deps.clock.now()) => {
    // from the later of now and the last fire: a timer that fires a little early must not
    // schedule the same fire again
    const next = job.trigger.next(new Date(Math.max(after, deps.clock.now())));
    if (next === null || stopped) return;
    const timer = setTimeout(() => {
      timers.delete(timer);
      schedule(job, next.getTime());
      const run = fire(deps, job, next.getTime()).catch(() => {});
      runs.add(run);
      run.finally(() => runs.delete(run));
    }, next.getTime() - deps.clock.now());
    timers.add(timer);
  };
  return {
    start() {
      for (const job of deps.jobs) schedule(job);
    },
    async stop() {
      stopped = true;
      for (const timer of timers) clearTimeout(timer);
      await Promise.all(runs);
    },
  };
};

/** One fire, with no deadline anywhere. */
async function fire(deps: FleetInstanceDeps, job: JobDefinition, fireAt: number): Promise<void> {
  const { lock, instanceId, leaseMs } = deps;
  const store = deps.store!; // the freeze scenarios always give a store
  const result = await lock.claim({
    key: job.name,
    fireAt,
    owner: instanceId,
    leaseMs,
    exclusive: true,
  });
  if (result.status !== 'won') return;
  const lease: Lease = result.lease;
  try {
    if ((await store.getJobState(job.name)).paused) return;
    const startedAt = deps.clock.now();
    const execution = {
      id: `${instanceId}-${fireAt}`,
      job: job.name,
      fireAt,
      attempt: 1,
      instanceId,
      token: lease.token,
      startedAt,
      error: null,
    };
    await store.record({ ...execution, status: 'running', finishedAt: null });
    const ctx = {
      job: job.name,
      fireAt: new Date(fireAt),
      startedAt: new Date(startedAt),
      instanceId,
      attempt: 1,
      token: lease.token,
      signal: new AbortController().signal,
      log: silentLogger,
      clock: deps.clock,
    } satisfies Partial<JobContext>;
    let status: 'succeeded' | 'failed' = 'succeeded';
    try {
      await job.run(ctx as JobContext);
    } catch {
      status = 'failed';
    }
    await store.record({ ...execution, status, finishedAt: deps.clock.now() });
  } finally {
    await lock.release(lease);
  }
}
