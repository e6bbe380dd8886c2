import type { Lock } from '@fleetcron/core';
import { backendModules } from './backends/index.js';
import type { OwnedLock, StartedBackend } from './backends/types.js';
import { VARIANTS } from './backends/types.js';
import { WorkerProcess } from './contention/pool.js';
import { type CellResult, type Placement, runContention } from './contention/run.js';
import { machineInfo } from './machine.js';
import type { BenchOptions, ScenarioName } from './options.js';
import type { Progress } from './progress.js';
import { int } from './report/format.js';
import {
  type BenchReport,
  type FleetRow,
  ratioRows,
  type ServerRow,
  violations,
} from './report/report.js';
import { emptyRow } from './report/scale.js';
import { runScaleCells, ScaleFleet, scaleCells } from './scale/fleet-run.js';
import { skewViolations } from './skew/report.js';
import { runSkewFire, SKEW_BACKENDS, type SkewRow } from './skew/run.js';
import { summarize } from './stats.js';

/** Steps the progress display counts for `options`. */
export function totalSteps(options: BenchOptions): number {
  const has = (s: ScenarioName) => options.scenarios.includes(s);
  const perBackend =
    (has('contention') ? options.instances.length * options.rounds * VARIANTS.length : 0) +
    (has('scale') ? scaleCells(options.fleetJobs, options.singleWakes, options.quick).length : 0);
  const skew = has('skew')
    ? options.backends.filter((b) => SKEW_BACKENDS.includes(b)).length * options.skewModes.length
    : 0;
  return (has('scheduler') ? 1 : 0) + options.backends.length * perBackend + skew;
}

const firstLine = (error: unknown): string =>
  (error instanceof Error ? error.message : String(error)).split('\n')[0] ?? 'unknown error';

/** Runs every scenario for `options` and returns the report (chart and files are the caller's). */
export async function runBench(options: BenchOptions, progress: Progress): Promise<BenchReport> {
  const started = new Date();
  const runTag = started.getTime().toString(36);
  const machine = machineInfo(process.env.FLEETCRON_BENCH_PINNED === '1');
  const servers: ServerRow[] = [];
  const contention: CellResult[] = [];
  const fleet: FleetRow[] = [];
  const skew: SkewRow[] = [];
  let single: BenchReport['single'] = null;

  const has = (s: ScenarioName) => options.scenarios.includes(s);

  // 1. One scheduler with many jobs, in a fresh process (clean RSS and CPU figures).
  if (has('scheduler')) await runSingle();
  async function runSingle(): Promise<void> {
    progress.status(`scheduler: ${options.scaleJobs} jobs in one instance`);
    const scaleWorker = new WorkerProcess('scale', ['--expose-gc']);
    try {
      const result = await scaleWorker.request({
        type: 'scale',
        jobs: options.scaleJobs,
        idleSeconds: options.idleSeconds,
      });
      single = result;
      progress.step(
        `scheduler ${int(result.jobs)} jobs`,
        `add ${result.addMs.toFixed(0)} ms, ${result.fakeClockTimers} timer, idle CPU ${result.idleCpuPercent.toFixed(2)} %`,
      );
    } catch (error) {
      single = { failure: firstLine(error) };
      progress.step('scheduler scale', `FAILED ${firstLine(error)}`);
    } finally {
      await scaleWorker.close();
    }
  }

  // 2. Per backend: contention cells, then the fleet scenario.
  const workers = Array.from({ length: options.workers }, (_, i) => new WorkerProcess(`w${i + 1}`));
  const cells = has('scale')
    ? scaleCells(options.fleetJobs, options.singleWakes, options.quick)
    : [];
  const instanceCounts = has('contention') ? options.instances : [];
  const scale = await ScaleFleet.create(runTag);
  try {
    for (const name of options.backends) {
      const module = backendModules[name];
      const placement: Placement =
        name === 'memory' ? { kind: 'in-process' } : { kind: 'workers', workers };
      progress.status(`${name}: starting the server`);
      let backend: StartedBackend;
      try {
        backend = await module.start();
      } catch (error) {
        const failure = `server did not start: ${firstLine(error)}`;
        progress.log(`${name}: ${failure}`);
        progress.skip(instanceCounts.length * options.rounds * VARIANTS.length + cells.length);
        for (const n of instanceCounts) {
          for (const variant of VARIANTS) {
            contention.push(emptyCell(name, variant, n, failure));
          }
        }
        for (const c of cells) {
          fleet.push({ ...emptyRow(name, c.mode, c.jobsPerWake, c.wakes, 0), failure });
        }
        continue;
      }
      servers.push({
        backend: name,
        version: backend.version,
        strategy: backend.strategy,
        floor: module.floorName,
        peer: module.peerName,
      });
      let inspector: OwnedLock | null = null;
      try {
        if (name !== 'memory' && has('contention')) {
          inspector = await module.lock(backend.connection, 2);
        }
        const lock: Lock | null = inspector?.lock ?? null;
        if (has('contention'))
          contention.push(
            ...(await runContention(
              module,
              backend,
              placement,
              lock,
              {
                instances: options.instances,
                durationSeconds: options.durationSeconds,
                rounds: options.rounds,
                sampleCap: 20_000,
                runTag,
              },
              VARIANTS,
              (label, perSec, failure) =>
                progress.step(label, failure ? `FAILED ${failure}` : `${int(perSec)} claims/s`),
            )),
          );
        if (has('scale'))
          try {
            progress.status(`${name}: jobs due together on 4 instance processes`);
            await scale.open(module, backend);
            if (!options.quick) await scale.warmUp();
            fleet.push(
              ...(await runScaleCells(scale, name, cells, (row) =>
                progress.step(
                  `${name} scale ${row.mode} ${row.jobsPerWake} jobs × ${row.wakes}`,
                  row.unavailable ??
                    (row.failure
                      ? `FAILED ${row.failure}`
                      : `ran ${row.ran}, dup ${row.duplicates}, missed ${row.missed}, lateness p99 ${row.lateness.p99.toFixed(0)} ms, early ${row.early}, claim calls/instance/wake ${(row.perWake.claim + row.perWake.claimMany).toFixed(1)} (${((row.wallMs ?? 0) / 1000).toFixed(1)} s, load ${(row.loadAverage ?? 0).toFixed(1)})`),
                ),
              )),
            );
          } catch (error) {
            for (const c of cells.slice(fleet.filter((f) => f.backend === name).length)) {
              fleet.push({
                ...emptyRow(name, c.mode, c.jobsPerWake, c.wakes, 0),
                failure: firstLine(error),
              });
            }
            progress.step(`${name} scale`, `FAILED ${firstLine(error)}`);
          } finally {
            await scale.closeBackend();
          }
        if (has('skew') && SKEW_BACKENDS.includes(name)) {
          for (const mode of options.skewModes) {
            progress.status(`${name}: skew scenario (${mode})`);
            const row = await runSkewFire(backend, mode, {
              jobs: options.quick ? 200 : 250,
              deadlineMs: 20_000,
              leadMs: options.skewLeadMs,
              tag: runTag,
            });
            skew.push(row);
            const l = row.lateness;
            progress.step(
              `${name} skew ${mode}`,
              row.failure
                ? `FAILED ${row.failure}`
                : `ran ${row.ran}/${row.jobs}, dup ${row.duplicates}, lateness min ${l.min.toFixed(0)} p50 ${l.p50.toFixed(0)} p99 ${l.p99.toFixed(0)} max ${l.max.toFixed(0)} ms`,
            );
          }
        }
      } finally {
        await inspector?.close().catch(() => {});
        await backend.close().catch(() => {});
      }
    }
  } finally {
    await Promise.allSettled([...workers.map((w) => w.close()), scale.close()]);
  }

  const finished = new Date();
  return {
    startedAt: started.toISOString(),
    finishedAt: finished.toISOString(),
    totalSeconds: (finished.getTime() - started.getTime()) / 1000,
    mode: options.quick ? 'quick' : 'full',
    options: {
      backends: options.backends,
      scenarios: options.scenarios,
      instances: options.instances,
      duration: options.durationSeconds,
      rounds: options.rounds,
      workers: options.workers,
      jobs: options.scaleJobs,
      fleetJobs: options.fleetJobs,
      singleWakes: options.singleWakes,
      idle: options.idleSeconds,
      pin: options.pin,
    },
    machine,
    servers,
    contention,
    ratios: ratioRows(contention),
    single,
    fleet,
    skew,
    failures: [...violations(contention, fleet), ...skewViolations(skew)],
    chartFile: null,
  };
}

function emptyCell(
  backend: string,
  variant: CellResult['variant'],
  instances: number,
  failure: string,
): CellResult {
  const none = summarize([]);
  return {
    backend,
    variant,
    instances,
    workers: 0,
    rounds: 0,
    claimsPerSec: Number.NaN,
    claimsPerSecRounds: [],
    firesPerSec: Number.NaN,
    claims: 0,
    won: 0,
    lost: 0,
    busy: 0,
    errors: 0,
    releaseErrors: 0,
    latency: none,
    release: none,
    account: { fires: 0, exactlyOnce: 0, duplicates: 0, missed: 0, unresolved: 0 },
    verified: 'n/a',
    failure,
  };
}
