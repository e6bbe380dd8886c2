import { every, type Lock, Scheduler } from '@fleetcron/core';
import { pollUntil, spyOnCrashes, waitUntilTime } from '../util.js';
import { type FailoverReport, type FailoverRun, judgeFailover } from './failover-judge.js';

/** An HA topology under test, as the adapter's test file builds it (see `@fleetcron/testkit`). */
export interface FailoverTopology {
  /** A lock on a client of its own, connected the way the adapter's README says for HA. */
  newLock(): Promise<Lock>;
  /** Injects the fault (kill or freeze the leader/primary, promote, ...). */
  fail(): Promise<void>;
  /** Undoes the fault before the next one (restart a killed member, resume a frozen one). */
  heal?(): Promise<void>;
  /** Tears the topology down. */
  close(): Promise<void>;
}

/** Options of {@link runFailover}. */
export interface FailoverRunOptions {
  /** Scheduler instances sharing the jobs (in this process). Default 3. */
  instances?: number;
  /** Jobs, each due every second on every instance. Default 5. */
  jobs?: number;
  /** The jobs' lease, ms. Default 2000. */
  leaseMs?: number;
  /** Faults per run, each followed by `afterMs` of running and `heal()`. Default 1. */
  faults?: number;
  /** How long the fleet runs after each fault, ms. Default 8000. */
  afterMs?: number;
}

/** A {@link FailoverReport} with the unhandled errors seen during the run. */
export interface FailoverOutcome extends FailoverReport {
  /** Unhandled rejections and uncaught exceptions (must be empty). */
  crashes: string[];
}

const PERIOD_MS = 1000;

/**
 * Runs real `Scheduler`s on `topology` (each on a lock of its own) under a steady burst of claims:
 * `jobs` jobs due every second on `instances` instances. Once every job has run twice, injects
 * `faults` faults (`fail()`, then `afterMs` of running, then `heal()`), and judges the append-only
 * ledger the jobs wrote ({@link judgeFailover}): duplicates, token order, fires lost and time
 * until claims succeed again per fault. Asserts nothing itself: the caller decides what must hold.
 */
export async function runFailover(
  topology: FailoverTopology,
  options: FailoverRunOptions = {},
): Promise<FailoverOutcome> {
  const instances = options.instances ?? 3;
  const jobCount = options.jobs ?? 5;
  const leaseMs = options.leaseMs ?? 2000;
  const faultCount = options.faults ?? 1;
  const afterMs = options.afterMs ?? 8000;
  const jobs = Array.from({ length: jobCount }, (_, j) => `failover-${j}`);
  const runs: FailoverRun[] = [];
  const spy = spyOnCrashes();
  const schedulers: Scheduler[] = [];
  const faultsAt: number[] = [];
  let startedAt = 0;
  let endAt = 0;
  try {
    for (let i = 0; i < instances; i++) {
      const lock = await topology.newLock();
      const scheduler = new Scheduler({ lock, instanceId: `failover-${i}`, leaseMs });
      for (const job of jobs) {
        scheduler.add({
          name: job,
          trigger: every(PERIOD_MS),
          run: (ctx) => {
            runs.push({
              job,
              fireAt: ctx.fireAt.getTime(),
              instanceId: ctx.instanceId,
              token: ctx.token,
              startedAt: Date.now(),
            });
          },
        });
      }
      schedulers.push(scheduler);
    }
    startedAt = Date.now();
    for (const scheduler of schedulers) scheduler.start();
    await pollUntil(() => jobs.every((job) => runs.filter((r) => r.job === job).length >= 2), {
      timeoutMs: 30_000,
      message: 'every job to run twice before the first fault',
    });
    for (let k = 0; k < faultCount; k++) {
      faultsAt.push(Date.now());
      await topology.fail();
      await waitUntilTime((faultsAt[k] as number) + afterMs, 'the fleet to run after the fault');
      if (k < faultCount - 1) await topology.heal?.();
    }
    endAt = Date.now();
  } finally {
    await Promise.all(schedulers.map((s) => s.stop({ drainMs: 5000 })));
    await topology.heal?.().catch(() => {});
    spy.dispose();
  }
  const firstRun = Math.min(...runs.map((r) => r.fireAt));
  const report = judgeFailover({
    runs,
    jobs,
    periodMs: PERIOD_MS,
    // Judged from the first fire every instance could claim (one period after the fleet started).
    firstFireAt: Math.max(firstRun, Math.ceil((startedAt + PERIOD_MS) / PERIOD_MS) * PERIOD_MS),
    faultsAt,
    lastFireAt: Math.floor((endAt - 2 * PERIOD_MS) / PERIOD_MS) * PERIOD_MS,
  });
  return { ...report, crashes: spy.caught };
}

/** One line of figures for logs and docs: duplicates, token-order violations, lost, resume. */
export function describeFailover(outcome: FailoverOutcome): string {
  const faults = outcome.faults
    .map(
      (f, i) =>
        `fault ${i + 1}: resume ${f.resumeMs ?? 'never'} ms, first run ${f.firstRunMs ?? 'never'} ms, lost ${f.lost}`,
    )
    .join('; ');
  return `${outcome.fires} fires, ${outcome.runs} runs, ${outcome.duplicates.length} duplicates, ${outcome.tokenOrder.length} token-order violations, ${outcome.missedBeforeFault.length} missed before the fault; ${faults}`;
}
