import type { Lock } from '@fleetcron/core';
import { accountJobs } from '../accounting.js';
import { sharedMemoryLock } from '../backends/memory.js';
import type { BackendModule, StartedBackend } from '../backends/types.js';
import { spread } from '../contention/pool.js';
import type { Placement } from '../contention/run.js';
import type { FleetRow } from '../report/report.js';
import { summarize } from '../stats.js';
import { type FleetResult, fleetJobName, runFleet } from './fleet.js';

/** Settings of the fleet scenario. */
export interface FleetSettings {
  jobs: number;
  instances: number;
  /** How long after the fire time every claim must have been answered. */
  deadlineMs: number;
  runTag: string;
}

/** Connections each PostgreSQL instance's pool may open in the fleet scenario. */
const FLEET_POOL_SIZE = 4;

/** Checks with `lock.inspect` that each job's fire has one `won` record, by the instance that ran it. */
async function verifyJobs(
  lock: Lock,
  prefix: string,
  fireAt: number,
  runs: FleetResult['runs'],
  jobs: number,
  failedJobs: ReadonlySet<number>,
): Promise<string> {
  const ranBy = new Map(runs.map((r) => [r.job, `fleet-i${r.instance}`]));
  const problems: string[] = [];
  const next = { job: 0 };
  const worker = async () => {
    for (let job = next.job++; job < jobs; job = next.job++) {
      const { fires } = await lock.inspect(fleetJobName(prefix, job));
      const records = fires.filter((f) => f.fireAt === fireAt);
      const owner = ranBy.get(job);
      // a job whose claims threw may have no record (the claim never reached the server)
      if (records.length === 0 && !owner && failedJobs.has(job)) continue;
      if (records.length !== 1) problems.push(`job ${job}: ${records.length} claim records`);
      else if (owner && (records[0]?.owner !== owner || records[0]?.outcome !== 'won')) {
        problems.push(`job ${job}: record of ${records[0]?.owner}, run by ${owner}`);
      }
    }
  };
  await Promise.all(Array.from({ length: 16 }, worker));
  return problems.length === 0
    ? 'ok'
    : `${problems.length} mismatches (${problems.slice(0, 3).join('; ')})`;
}

/**
 * Runs the fleet scenario on one backend: `instances` schedulers spread over the worker
 * processes (memory: all in this process, sharing one MemoryLock), `jobs` jobs due at the same
 * instant, then accounts runs and cross-checks with `lock.inspect`.
 */
export async function runFleetScenario(
  module: BackendModule,
  started: StartedBackend,
  placement: Placement,
  inspector: Lock | null,
  settings: FleetSettings,
): Promise<FleetRow> {
  const prefix = `fleet-${settings.runTag}`;
  const lead = 1500;
  let fireAt = 0;
  let results: FleetResult[];
  if (placement.kind === 'in-process') {
    const lock = sharedMemoryLock();
    const instances = Array.from({ length: settings.instances }, (_, index) => ({
      index,
      owned: { lock, close: async () => {} },
    }));
    fireAt = Math.ceil((Date.now() + lead) / 1000) * 1000;
    results = [
      await runFleet(instances, {
        jobs: settings.jobs,
        fireAt,
        prefix,
        deadlineMs: settings.deadlineMs,
      }),
    ];
  } else {
    const groups = spread(settings.instances, placement.workers.length);
    const workers = placement.workers.slice(0, groups.length);
    await Promise.all(
      workers.map((w, i) =>
        w.request({
          type: 'fleet-prepare',
          backend: module.name,
          connection: started.connection,
          instances: groups[i] as number[],
          poolSize: FLEET_POOL_SIZE,
        }),
      ),
    );
    fireAt = Math.ceil((Date.now() + lead) / 1000) * 1000;
    results = await Promise.all(
      workers.map((w) =>
        w.request({
          type: 'fleet-go',
          jobs: settings.jobs,
          fireAt,
          prefix,
          deadlineMs: settings.deadlineMs,
        }),
      ),
    );
  }
  const runs = results.flatMap((r) => r.runs);
  const failedJobs = new Set(results.flatMap((r) => r.failedJobs));
  const account = accountJobs(settings.jobs, runs, failedJobs);
  const lock = module.name === 'memory' ? sharedMemoryLock() : inspector;
  const verified = lock
    ? await verifyJobs(lock, prefix, fireAt, runs, settings.jobs, failedJobs).catch(
        (e: unknown) => `inspect failed: ${(e as Error).message}`,
      )
    : 'n/a';
  const sum = (f: (r: FleetResult) => number) => results.reduce((s, r) => s + f(r), 0);
  return {
    backend: module.name,
    instances: settings.instances,
    ...account,
    lateness: summarize(runs.map((r) => r.latenessMs)),
    won: sum((r) => r.won),
    lost: sum((r) => r.lost),
    busy: sum((r) => r.busy),
    failed: sum((r) => r.failed),
    complete: results.every((r) => r.complete),
    settledAfterMs: Math.max(...results.map((r) => r.settledAfterMs)),
    verified,
  };
}
