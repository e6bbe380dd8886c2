import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import { accountJobs } from '../accounting.js';
import type { BackendModule, StartedBackend } from '../backends/types.js';
import { WorkerProcess } from '../contention/pool.js';
import { emptyRow, type FleetRow } from '../report/scale.js';
import { summarize } from '../stats.js';
import { CLAIM_MODES, type ClaimMode, cellJobs, type ScaleCell } from './cell.js';
import { modeUnavailable } from './claim-mode.js';
import type { FleetResult } from './fleet.js';
import { readLedger } from './ledger.js';

/** Instances (schedulers) of the scale scenario. */
export const SCALE_INSTANCES = 4;

/** Connections each PostgreSQL instance's pool may open. */
const POOL_SIZE = 4;

/** Time between the wakes of a cell with several wakes (the single-job reference), ms. */
const WAKE_GAP_MS = 200;

/** Time from sending a cell until its first wake: start-up of the schedulers with all jobs added. */
const leadMs = (jobs: number): number => 500 + Math.ceil(jobs * 0.3);

/** Extra lead of a leader cell: its candidates campaign at `start()`, a leader must be elected by the fire. */
const LEADER_LEAD_MS = 800;

/** How long after its last wake a cell waits for every claim to be answered. */
const deadlineMs = (jobs: number): number => 30_000 + jobs * 10;

/**
 * The scale scenario's fleet: {@link SCALE_INSTANCES} instance processes, one real `Scheduler`
 * each on its own lock and connection (memory: a `MemoryLock` cannot be shared between
 * processes, so its 4 schedulers run in the first process, on one lock, and the row says so).
 * Each cell adds its jobs in every process, fires them, and is judged from the ledger files the
 * instances append to, cross-checked with `lock.inspect`.
 */
export class ScaleFleet {
  private readonly processes = Array.from(
    { length: SCALE_INSTANCES },
    (_, i) => new WorkerProcess(`scale-i${i}`),
  );
  private holders: { worker: WorkerProcess; instances: number[] }[] = [];
  private backend = '';
  private lockCanBatch = false;
  private hasElector = false;
  private cells = 0;

  private constructor(
    private readonly ledgerDir: string,
    private readonly runTag: string,
  ) {}

  /** Starts the instance processes (they open nothing until {@link open}). */
  static async create(runTag: string): Promise<ScaleFleet> {
    return new ScaleFleet(await mkdtemp(join(os.tmpdir(), 'fleetcron-scale-ledger-')), runTag);
  }

  /** Opens a lock per instance on `started` (closing the previous backend's). */
  async open(module: BackendModule, started: StartedBackend): Promise<void> {
    this.backend = module.name;
    const inProcess = module.name === 'memory';
    const all = Array.from({ length: SCALE_INSTANCES }, (_, i) => i);
    this.holders = inProcess
      ? [{ worker: this.processes[0] as WorkerProcess, instances: all }]
      : this.processes.map((worker, i) => ({ worker, instances: [i] }));
    const answers = await Promise.all(
      this.holders.map(({ worker, instances }) =>
        worker.request({
          type: 'scale-open',
          backend: module.name,
          connection: started.connection,
          instances,
          poolSize: POOL_SIZE,
        }),
      ),
    );
    this.lockCanBatch = answers.every((a) => a.canBatch);
    this.hasElector = answers.every((a) => a.hasElector);
  }

  /**
   * One unrecorded cell per per-fire mode (16 jobs × 2 wakes): opens every pooled connection and warms
   * the scheduler's code paths, so the first recorded cell (the 1-job reference) is not the
   * one that pays for it. Its rows are dropped; a failure shows in the recorded cells.
   */
  async warmUp(): Promise<void> {
    for (const mode of ['unbatched', 'batched'] as const) {
      await this.runCell(mode, 16, 2).catch(() => null);
    }
  }

  /** Why `mode` cannot run on this backend, or `null` when it can. */
  unavailable(mode: ClaimMode): string | null {
    return modeUnavailable(mode, this.lockCanBatch, this.hasElector);
  }

  /** Runs one cell: `jobsPerWake` jobs due at each of `wakes` instants, claimed in `mode`. */
  async runCell(mode: ClaimMode, jobsPerWake: number, wakes: number): Promise<FleetRow> {
    const base = emptyRow(this.backend, mode, jobsPerWake, wakes, this.holders.length);
    const unavailable = this.unavailable(mode);
    if (unavailable) return { ...base, unavailable };
    const jobs = jobsPerWake * wakes;
    const cell: ScaleCell = {
      prefix: `scale-${this.runTag}-${++this.cells}`,
      ...{ jobsPerWake, wakes, wakeGapMs: WAKE_GAP_MS, mode },
      // leader cells: time for the first campaign before the fire (no leader, no claim)
      fireAt: Date.now() + leadMs(jobs) + (mode === 'leader' ? LEADER_LEAD_MS : 0),
      deadlineMs: deadlineMs(jobs),
      ledgerDir: this.ledgerDir,
    };
    const began = Date.now();
    const loadAverage = os.loadavg()[0] ?? Number.NaN;
    const results = await Promise.all(
      this.holders.map(({ worker }) => worker.request({ type: 'scale-go', cell })),
    );
    return { ...(await this.judge(base, cell, results)), wallMs: Date.now() - began, loadAverage };
  }

  private async judge(base: FleetRow, cell: ScaleCell, results: FleetResult[]): Promise<FleetRow> {
    const ledger = await readLedger(this.ledgerDir, cell.prefix);
    const failedJobs = [...new Set(results.flatMap((r) => r.failedJobs))];
    const account = accountJobs(cellJobs(cell), ledger.lines, failedJobs);
    const ranBy: [number, number][] = ledger.lines.map((l) => [l.job, l.instance]);
    const verified = await (this.holders[0] as { worker: WorkerProcess }).worker
      .request({ type: 'scale-verify', cell, ranBy, failedJobs })
      .catch((e: unknown) => `inspect failed: ${(e as Error).message.split('\n')[0]}`);
    const sum = (f: (r: FleetResult) => number) => results.reduce((s, r) => s + f(r), 0);
    const calls = results.flatMap((r) => r.calls.map((c) => c.calls));
    const perWake = (f: (c: (typeof calls)[number]) => number) =>
      calls.reduce((s, c) => s + f(c), 0) / (calls.length * cell.wakes);
    return {
      ...base,
      ...account,
      lateness: summarize(ledger.lines.map((l) => l.latenessMs)),
      won: sum((r) => r.won),
      lost: sum((r) => r.lost),
      busy: sum((r) => r.busy),
      failed: sum((r) => r.failed),
      early: sum((r) => r.early),
      complete: results.every((r) => r.complete),
      settledAfterMs: Math.max(
        ...(results.some((r) => !r.follower) ? results.filter((r) => !r.follower) : results).map(
          (r) => r.settledAfterMs,
        ),
      ),
      startedAfterMs: Math.max(...results.map((r) => r.startedAfterMs)),
      electedAfterMs: electedAfter(results),
      claimsPerFire: calls.reduce((s, c) => s + c.claim + c.claimManyRequests, 0) / cellJobs(cell),
      perWake: {
        claim: perWake((c) => c.claim),
        claimMany: perWake((c) => c.claimMany),
        batchedFires: perWake((c) => c.claimManyRequests),
        release: perWake((c) => c.release + c.releaseMany),
      },
      ledger: { files: ledger.files, torn: ledger.torn },
      verified,
    };
  }

  /** Closes the backend's locks in every process. */
  async closeBackend(): Promise<void> {
    await Promise.allSettled(this.holders.map(({ worker }) => worker.request({ type: 'close' })));
    this.holders = [];
  }

  /** Ends the instance processes and removes the ledger files. */
  async close(): Promise<void> {
    await Promise.allSettled(this.processes.map((p) => p.close()));
    await rm(this.ledgerDir, { recursive: true, force: true });
  }
}

/** When the first leader of a leader cell was elected, ms after the first wake (`null`: none, or not a leader cell). */
function electedAfter(results: readonly FleetResult[]): number | null {
  const times = results.map((r) => r.electedAfterMs).filter((t): t is number => t !== null);
  return times.length ? Math.min(...times) : null;
}

/**
 * The cells of one backend, in run order: each job count in every mode, side by side (`quick`:
 * the 1-job reference in `batched` mode only, to keep the smoke run short).
 */
export function scaleCells(
  jobCounts: readonly number[],
  singleWakes: number,
  quick = false,
): { mode: ClaimMode; jobsPerWake: number; wakes: number }[] {
  const counts: [number, number][] = [
    [1, singleWakes],
    ...jobCounts.map((n): [number, number] => [n, 1]),
  ];
  return counts.flatMap(([jobsPerWake, wakes]) =>
    CLAIM_MODES.filter((mode) => !(quick && jobsPerWake === 1 && mode !== 'batched')).map(
      (mode) => ({ mode, jobsPerWake, wakes }),
    ),
  );
}

/**
 * Runs every cell of {@link scaleCells} on `fleet` (already opened on the backend); a cell that
 * throws becomes a row with its failure, and the next cells still run.
 */
export async function runScaleCells(
  fleet: ScaleFleet,
  backend: string,
  cells: ReturnType<typeof scaleCells>,
  onRow: (row: FleetRow) => void,
): Promise<FleetRow[]> {
  const rows: FleetRow[] = [];
  for (const { mode, jobsPerWake, wakes } of cells) {
    const row = await fleet.runCell(mode, jobsPerWake, wakes).catch(
      (error: unknown): FleetRow => ({
        ...emptyRow(backend, mode, jobsPerWake, wakes, 0),
        failure: (error instanceof Error ? error.message : String(error)).split('\n')[0] ?? '',
      }),
    );
    rows.push(row);
    onRow(row);
  }
  return rows;
}
