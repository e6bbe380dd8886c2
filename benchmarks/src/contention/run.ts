import type { Lock } from '@fleetcron/core';
import { accountFires, type FireAccount } from '../accounting.js';
import { sharedMemoryLock } from '../backends/memory.js';
import type { BackendModule, Claimer, StartedBackend, Variant } from '../backends/types.js';
import { median, perSecond, type Summary, summarize } from '../stats.js';
import type { WorkerProcess } from './pool.js';
import { spread } from './pool.js';
import { instanceOwner, runSlice, type SliceResult, type SliceRun, warm } from './slice.js';

/** Figures of one cell: one backend, one variant, one instance count, over every round. */
export interface CellResult {
  backend: string;
  variant: Variant;
  instances: number;
  /** Worker processes the instances were spread over (0: in the main process). */
  workers: number;
  rounds: number;
  /** Claims per second, median over rounds (every instance's claims counted). */
  claimsPerSec: number;
  claimsPerSecRounds: number[];
  /** Distinct fires decided per second, median over rounds. */
  firesPerSec: number;
  claims: number;
  won: number;
  lost: number;
  busy: number;
  errors: number;
  releaseErrors: number;
  latency: Summary;
  release: Summary;
  /** Winners per fire over every round. */
  account: Omit<FireAccount, 'examples'>;
  /** Cross-check against `lock.inspect` (fleetcron only): `ok`, `n/a`, or what differed. */
  verified: string;
  /** Set when the cell could not run (its message). */
  failure?: string;
}

/** Settings of the contention scenario. */
export interface ContentionSettings {
  instances: number[];
  /** Measured seconds per cell, split over `rounds` interleaved rounds. */
  durationSeconds: number;
  rounds: number;
  sampleCap: number;
  runTag: string;
}

/** Where the instances of a backend run: worker processes, or the main process (memory). */
export type Placement = { kind: 'workers'; workers: WorkerProcess[] } | { kind: 'in-process' };

// Fires are base + step (ms): all of them in the past (a fire more than the locks' early
// tolerance ahead of the backend's clock is refused `early`) and inside the 5 min claim window.
const WINDOW_HEADROOM_MS = 280_000;
const MAX_STEPS = 270_000;

/** One slice: prepare every group, start them together, collect, close. */
async function runOneSlice(
  module: BackendModule,
  started: StartedBackend,
  variant: Variant,
  n: number,
  placement: Placement,
  key: string,
  durationMs: number,
  sampleCap: number,
): Promise<{ results: SliceResult[]; base: number }> {
  const base = Date.now() - WINDOW_HEADROOM_MS;
  const runFor = (instances: number[], startAt: number): SliceRun => ({
    key,
    base,
    startAt,
    durationMs,
    instances,
    sampleCap,
    maxSteps: MAX_STEPS,
  });
  if (placement.kind === 'in-process') {
    const claimers: Claimer[] = [];
    try {
      for (let i = 0; i < n; i++) {
        claimers.push(await module.claimer(started.connection, variant, instanceOwner(i)));
      }
      await warm(claimers, key, base);
      return {
        results: [
          await runSlice(
            claimers,
            runFor(
              claimers.map((_, i) => i),
              Date.now(),
            ),
          ),
        ],
        base,
      };
    } finally {
      await Promise.allSettled(claimers.map((c) => c.close()));
    }
  }
  const groups = spread(n, placement.workers.length);
  const workers = placement.workers.slice(0, groups.length);
  try {
    await Promise.all(
      workers.map((w, i) =>
        w.request({
          type: 'prepare',
          backend: module.name,
          variant,
          connection: started.connection,
          instances: groups[i] as number[],
          key,
          base,
        }),
      ),
    );
    const startAt = Date.now() + 30;
    const results = await Promise.all(
      workers.map((w, i) => w.request({ type: 'go', run: runFor(groups[i] as number[], startAt) })),
    );
    return { results, base };
  } finally {
    await Promise.allSettled(workers.map((w) => w.request({ type: 'close' })));
  }
}

/**
 * Checks the backend's own records (`lock.inspect`) against what the instances reported: every
 * won fire has a `won` record naming its winner, and no other fire of the slice has a record.
 */
export async function verifyByInspect(
  lock: Lock,
  key: string,
  base: number,
  results: readonly SliceResult[],
): Promise<string> {
  const inspection = await lock.inspect(key);
  const records = new Map(inspection.fires.map((f) => [f.fireAt, f]));
  const winners = new Map<number, string>();
  for (const r of results) {
    for (let i = 0; i < r.wins.length; i++) {
      winners.set(base + (r.wins[i] as number), instanceOwner(r.winners[i] as number));
    }
  }
  const problems: string[] = [];
  for (const [fireAt, owner] of winners) {
    const record = records.get(fireAt);
    if (!record) problems.push(`fire ${fireAt - base}: no claim record`);
    else if (record.outcome !== 'won' || record.owner !== owner) {
      problems.push(
        `fire ${fireAt - base}: record ${record.owner}/${record.outcome}, won by ${owner}`,
      );
    }
  }
  for (const fireAt of records.keys()) {
    if (!winners.has(fireAt))
      problems.push(`fire ${fireAt - base}: record without a reported winner`);
  }
  if (problems.length === 0) return 'ok';
  return `${problems.length} mismatches (${problems.slice(0, 3).join('; ')})`;
}

/** Merges the rounds of one cell into its figures. */
export function mergeCell(
  head: Pick<CellResult, 'backend' | 'variant' | 'instances' | 'workers'>,
  rounds: { results: SliceResult[]; account: FireAccount; verified: string }[],
): CellResult {
  const all = rounds.flatMap((r) => r.results);
  const sum = (f: (r: SliceResult) => number) => all.reduce((s, r) => s + f(r), 0);
  const elapsedOf = (results: SliceResult[]) => Math.max(...results.map((r) => r.elapsedMs));
  const account = { fires: 0, exactlyOnce: 0, duplicates: 0, missed: 0, unresolved: 0 };
  for (const round of rounds) {
    for (const k of Object.keys(account) as (keyof typeof account)[])
      account[k] += round.account[k];
  }
  const claimsPerSecRounds = rounds.map((r) =>
    perSecond(
      r.results.reduce((s, x) => s + x.claims, 0),
      elapsedOf(r.results),
    ),
  );
  const verdicts = [...new Set(rounds.map((r) => r.verified))];
  return {
    ...head,
    rounds: rounds.length,
    claimsPerSec: median(claimsPerSecRounds),
    claimsPerSecRounds,
    firesPerSec: median(rounds.map((r) => perSecond(r.account.fires, elapsedOf(r.results)))),
    claims: sum((r) => r.claims),
    won: sum((r) => r.won),
    lost: sum((r) => r.lost),
    busy: sum((r) => r.busy),
    errors: sum((r) => r.errors),
    releaseErrors: sum((r) => r.releaseErrors),
    latency: summarize(all.flatMap((r) => r.latencies)),
    release: summarize(all.flatMap((r) => r.releaseLatencies)),
    account,
    verified:
      verdicts.length === 1
        ? (verdicts[0] as string)
        : verdicts.filter((v) => v !== 'ok').join('; '),
  };
}

/** What the contention scenario reports per slice (for the progress display). */
export type SliceListener = (label: string, claimsPerSec: number | null, failure?: string) => void;

/**
 * Runs every cell of one backend: for each instance count, `rounds` rounds, each round running
 * fleetcron, floor and peer back to back (order rotated per round) so the three see the same
 * machine conditions.
 */
export async function runContention(
  module: BackendModule,
  started: StartedBackend,
  placement: Placement,
  inspector: Lock | null,
  settings: ContentionSettings,
  variants: readonly Variant[],
  onSlice: SliceListener,
): Promise<CellResult[]> {
  const cells: CellResult[] = [];
  // One unrecorded warm-up slice per variant: JIT, server caches, etcd lease pools, so the first
  // measured cell is not charged with one-time costs.
  const warmN = Math.min(2, settings.instances[0] ?? 1);
  for (const variant of variants) {
    await runOneSlice(
      module,
      started,
      variant,
      warmN,
      placement,
      `warm-${variant}-${settings.runTag}`,
      300,
      settings.sampleCap,
    ).catch(() => {});
  }
  for (const n of settings.instances) {
    const perVariant = new Map<
      Variant,
      { results: SliceResult[]; account: FireAccount; verified: string }[]
    >(variants.map((v) => [v, []]));
    const failures = new Map<Variant, string>();
    const sliceMs = (settings.durationSeconds * 1000) / settings.rounds;
    for (let round = 0; round < settings.rounds; round++) {
      const order = variants.map((_, i) => variants[(i + round) % variants.length] as Variant);
      for (const variant of order) {
        const label = `${module.name} ${variant} n=${n} round ${round + 1}/${settings.rounds}`;
        if (failures.has(variant)) {
          onSlice(label, null, failures.get(variant));
          continue;
        }
        const key = `c-${variant}-n${n}-r${round}-${settings.runTag}`;
        try {
          const { results, base } = await runOneSlice(
            module,
            started,
            variant,
            n,
            placement,
            key,
            sliceMs,
            settings.sampleCap,
          );
          const account = accountFires(
            results.map((r) => ({ steps: r.steps, wins: r.wins, errors: r.errorFires })),
          );
          let verified = 'n/a';
          if (variant === 'fleetcron') {
            const lock = module.name === 'memory' ? sharedMemoryLock() : inspector;
            verified = lock
              ? await verifyByInspect(lock, key, base, results).catch(
                  (e: unknown) => `inspect failed: ${(e as Error).message}`,
                )
              : 'n/a';
          }
          perVariant.get(variant)?.push({ results, account, verified });
          const claims = results.reduce((s, r) => s + r.claims, 0);
          onSlice(label, perSecond(claims, Math.max(...results.map((r) => r.elapsedMs))));
        } catch (error) {
          const message = (error as Error).message.split('\n')[0] ?? String(error);
          failures.set(variant, message);
          onSlice(label, null, message);
        }
      }
    }
    const workers = placement.kind === 'workers' ? Math.min(placement.workers.length, n) : 0;
    for (const variant of variants) {
      const rounds = perVariant.get(variant) ?? [];
      const head = { backend: module.name, variant, instances: n, workers };
      const failure = failures.get(variant);
      if (rounds.length === 0) {
        cells.push({ ...mergeCell(head, []), failure: failure ?? 'no rounds ran' });
      } else {
        const cell = mergeCell(head, rounds);
        if (failure) cell.failure = failure;
        cells.push(cell);
      }
    }
  }
  return cells;
}
