/**
 * The restart scenario (issue #25): {@link RESTART_INSTANCES} instance processes, each a real
 * `Scheduler` on its own lock and store connections with the same `jobs` cron jobs. The fleet
 * runs a fire, is killed whole with SIGKILL, stays down across `missedFires` fires, and is
 * started again in new processes within a few ms of each other; the runs the instances appended
 * to their ledgers are then judged per fire time ({@link judgeRestart}): every fire before the
 * outage and after the restart run once, the missed ones as the catch-up policy owes them.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import type { CatchUpPolicy, OverlapPolicy } from '@fleetcron/core';
import { backendModules } from '../backends/index.js';
import type { StartedBackend } from '../backends/types.js';
import { WorkerProcess } from '../contention/pool.js';
import { readLedger } from '../scale/ledger.js';
import type { RestartStarted, RestartStats } from './instance.js';
import {
  isRestartLine,
  judgeRestart,
  type RestartTimeline,
  type RestartVerdict,
  restartViolations,
} from './judge.js';

/** Instance processes of the fleet. */
export const RESTART_INSTANCES = 4;

/** What one restart run is asked to do. */
export interface RestartSettings {
  jobs: number;
  /** Period of the six-field cron schedule, whole seconds dividing 60 (`*\/10 * * * * *`: 10). */
  periodSeconds: number;
  catchUp: CatchUpPolicy;
  overlap: OverlapPolicy;
  /** How long each run takes, ms (a timer). */
  runMs: number;
  withStore: boolean;
  /** Fires the whole fleet stays down across. */
  missedFires: number;
  /** Fires judged after the restart. */
  afterFires: number;
  /** Unique per run (job names, ledger files). */
  tag: string;
}

/** One restart run on one backend. */
export interface RestartRow {
  backend: string;
  jobs: number;
  instances: number;
  withStore: boolean;
  catchUp: string;
  verdict: RestartVerdict | null;
  /** What breaks the guarantees (empty: none). */
  violations: string[];
  /** ms from the restart until the last instance had added its jobs and started. */
  restartedInMs: number;
  /** Per instance of the restarted fleet: RSS after start and at the end, and peak, MB. */
  memory: { startMb: number; endMb: number; peakMb: number }[];
  /** Claim answers and skips of the restarted fleet, summed over its instances. */
  events: Record<string, number>;
  /** Ledger lines that did not parse (a write torn by the SIGKILL). */
  torn: number;
  failure: string | null;
}

const MB = 1024 * 1024;

const sleepUntil = (at: number) =>
  new Promise<void>((resolve) => setTimeout(resolve, Math.max(0, at - Date.now())));

/** The first fire time of a `periodMs` cron at or after `t` (fires fall on multiples of it). */
const fireAtOrAfter = (t: number, periodMs: number) => Math.ceil(t / periodMs) * periodMs;

/** Runs the scenario once on `backend` (already started) and judges it. */
export async function runRestart(
  backend: StartedBackend,
  settings: RestartSettings,
): Promise<RestartRow> {
  const module = backendModules[backend.name];
  const row: RestartRow = {
    ...{ backend: backend.name, jobs: settings.jobs, instances: RESTART_INSTANCES },
    ...{ withStore: settings.withStore, catchUp: JSON.stringify(settings.catchUp) },
    ...{ verdict: null, violations: [], restartedInMs: 0, memory: [], events: {}, torn: 0 },
    failure: null,
  };
  if (backend.name === 'memory') {
    return { ...row, failure: 'n/a: a MemoryLock cannot be shared by processes' };
  }
  if (settings.withStore && !module.store) {
    return { ...row, failure: `n/a: ${backend.name} has no store for the benchmark` };
  }
  const periodMs = settings.periodSeconds * 1000;
  const ledgerDir = await mkdtemp(join(os.tmpdir(), 'fleetcron-restart-ledger-'));
  const prefix = `restart-${settings.tag}`;
  const spawn = (generation: number) =>
    Array.from(
      { length: RESTART_INSTANCES },
      (_, i) => new WorkerProcess(`restart-g${generation}-i${i}`),
    );
  const startAll = (fleet: WorkerProcess[], generation: number) =>
    Promise.all(
      fleet.map((worker, instance) =>
        worker.request({
          type: 'restart-start',
          backend: backend.name,
          connection: backend.connection,
          ...{ instance, generation, prefix, jobs: settings.jobs },
          schedule: `*/${settings.periodSeconds} * * * * *`,
          ...{ catchUp: settings.catchUp, overlap: settings.overlap, runMs: settings.runMs },
          withStore: settings.withStore,
          poolSize: 4,
          ledgerFile: join(ledgerDir, `${prefix}-i${instance}-g${generation}.ndjson`),
        }),
      ),
    );
  let first: WorkerProcess[] = [];
  let second: WorkerProcess[] = [];
  try {
    if (settings.withStore) await module.store?.prepare(backend.connection);
    first = spawn(0);
    await startAll(first, 0);
    // the first judged fire: one the whole first fleet was up for
    const firstFire = fireAtOrAfter(Date.now() + 1_000, periodMs);
    const killAt = firstFire + periodMs * 0.6;
    second = spawn(1); // loaded while the first fleet runs: the restart measures the instances, not tsx
    await sleepUntil(killAt);
    await Promise.all(first.map((w) => w.kill('SIGKILL')));
    const restartAt = killAt + settings.missedFires * periodMs;
    await sleepUntil(restartAt);
    const restarted: RestartStarted[] = await startAll(second, 1);
    row.restartedInMs = Date.now() - restartAt;
    // the fleet is back once its first instance started: opening the connections (the SQLite
    // lock's worker thread, under tsx) took seconds on a loaded machine, and the fires due
    // meanwhile were missed, not lost (catch-up owes them per its policy)
    const backAt = Math.max(restartAt, Math.min(...restarted.map((r) => r.startedAt)));
    const lastFire = fireAtOrAfter(backAt, periodMs) + (settings.afterFires - 1) * periodMs;
    await sleepUntil(lastFire + periodMs * 0.8);
    const stats: RestartStats[] = await Promise.all(
      second.map((w) => w.request({ type: 'restart-stats' })),
    );
    await Promise.all(second.map((w) => w.request({ type: 'restart-stop' })));
    row.memory = stats.map((s, i) => ({
      startMb: (restarted[i]?.rss ?? Number.NaN) / MB,
      endMb: s.rss / MB,
      peakMb: s.maxRss / MB,
    }));
    for (const s of stats) {
      for (const [name, n] of Object.entries(s.events))
        row.events[name] = (row.events[name] ?? 0) + n;
    }
    const timeline = timelineOf(settings.jobs, {
      firstFire,
      lastFire,
      killAt,
      restartAt: backAt,
      periodMs,
    });
    const ledger = await readLedger(ledgerDir, prefix, isRestartLine);
    row.torn = ledger.torn;
    row.verdict = judgeRestart(
      timeline,
      ledger.lines.filter((l) => l.fireAt >= firstFire), // fires before: the fleet starting up
    );
    row.violations = restartViolations(row.verdict, settings.catchUp);
  } catch (error) {
    row.failure = (error instanceof Error ? error.message : String(error)).split('\n')[0] ?? '';
  } finally {
    await Promise.allSettled([...first, ...second].map((w) => w.close()));
    await rm(ledgerDir, { recursive: true, force: true });
  }
  return row;
}

/** Every fire time from `firstFire` to `lastFire`, by where it falls against the outage. */
function timelineOf(
  jobs: number,
  t: { firstFire: number; lastFire: number; killAt: number; restartAt: number; periodMs: number },
): RestartTimeline {
  const timeline = { jobs, before: [] as number[], missed: [] as number[], after: [] as number[] };
  for (let fireAt = t.firstFire; fireAt <= t.lastFire; fireAt += t.periodMs) {
    const phase = fireAt < t.killAt ? 'before' : fireAt <= t.restartAt ? 'missed' : 'after';
    timeline[phase].push(fireAt);
  }
  return timeline;
}
