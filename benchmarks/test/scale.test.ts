import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import {
  type Lock,
  MemoryElector,
  MemoryLock,
  Scheduler,
  type SchedulerOptions,
} from '@fleetcron/core';
import { afterAll, describe, expect, it } from 'vitest';
import {
  goalsTable,
  leaderTable,
  scaleGoals,
  scaleTable,
  scaleViolations,
} from '../src/report/scale.js';
import { jobFireAt, type ScaleCell } from '../src/scale/cell.js';
import { modeUnavailable, withoutBatches } from '../src/scale/claim-mode.js';
import { canBatch, countingLock } from '../src/scale/counting-lock.js';
import { runFleet } from '../src/scale/fleet.js';
import { scaleCells } from '../src/scale/fleet-run.js';
import { parseLedger, readLedger } from '../src/scale/ledger.js';
import { verifyCell } from '../src/scale/verify.js';
import { summarize } from '../src/stats.js';
import { fleetRow } from './helpers.js';

const request = (key: string, fireAt: number) => ({
  key,
  fireAt,
  owner: 'o',
  leaseMs: 30_000,
  exclusive: false,
});

/** Whether this build's Scheduler batches claims (it has the `claimBatchSize` option of #15). */
function schedulerBatches(): boolean {
  try {
    new Scheduler({ lock: new MemoryLock(), claimBatchSize: 8 } as SchedulerOptions);
    return true;
  } catch {
    return false;
  }
}

/** A lock without the batch methods: delegates the single-fire ones to a MemoryLock. */
function singleOnly(inner: MemoryLock): Lock {
  const { maxBatch: _drop, ...capabilities } = inner.capabilities;
  return {
    backend: 'single-only',
    capabilities,
    windowMs: inner.windowMs,
    claim: (r) => inner.claim(r),
    extend: (l, ms) => inner.extend(l, ms),
    release: (l) => inner.release(l),
    inspect: (k) => inner.inspect(k),
  };
}

describe('countingLock', () => {
  it('counts claims and releases and answers as the lock does', async () => {
    const counted = countingLock(new MemoryLock());
    const now = Date.now();
    const won = await counted.lock.claim(request('a', now));
    expect(won.status).toBe('won');
    expect((await counted.lock.claim(request('a', now))).status).toBe('won'); // same owner re-sent
    if (won.status === 'won') await counted.lock.release(won.lease);
    expect(counted.calls).toMatchObject({ claim: 2, claimMany: 0, release: 1 });
    counted.reset();
    expect(counted.calls.claim).toBe(0);
  });

  it('after reset(prefix) counts only the calls about keys with that prefix', async () => {
    const counted = countingLock(new MemoryLock());
    counted.reset('cell-');
    const now = Date.now();
    await counted.lock.claim(request('own-job', now));
    await counted.lock.claim(request('cell-1', now));
    await counted.lock.claimMany?.([request('own-job', now + 1), request('cell-2', now)]);
    await counted.lock.claimMany?.([request('own-job', now + 2)]);
    expect(counted.calls.claim).toBe(1);
    if (counted.lock.claimMany) {
      expect(counted.calls).toMatchObject({ claimMany: 1, claimManyRequests: 1 });
    }
  });

  it('has claimMany exactly when the lock has it, and counts batches and their fires', async () => {
    const memory = new MemoryLock();
    const plain = countingLock(singleOnly(memory));
    expect(plain.lock.claimMany).toBeUndefined();
    expect(canBatch(plain.lock)).toBe(false);
    expect(modeUnavailable('batched', canBatch(plain.lock))).toMatch(/^n\/a: the lock has no/);
    expect(modeUnavailable('unbatched', false)).toBeNull();
    expect(withoutBatches(memory).claimMany).toBeUndefined();
    expect(withoutBatches(memory).capabilities.maxBatch).toBeUndefined();
    expect(withoutBatches(memory).capabilities.minLeaseMs).toBe(memory.capabilities.minLeaseMs);

    const batching = countingLock(memory);
    expect(canBatch(batching.lock)).toBe(canBatch(memory));
    if (!memory.claimMany) return; // MemoryLock before claimMany: nothing more to count
    const now = Date.now();
    const results = await batching.lock.claimMany?.([request('b', now), request('c', now)]);
    expect(results?.map((r) => r.status)).toEqual(['won', 'won']);
    expect(batching.calls).toMatchObject({ claim: 0, claimMany: 1, claimManyRequests: 2 });
  });
});

describe('ledger', () => {
  it('parses one run per line and counts torn lines', () => {
    const text = `{"job":1,"instance":0,"pid":9,"latenessMs":3}\n\n{"job":2,"inst`;
    const { lines, torn } = parseLedger(text);
    expect(lines).toEqual([{ job: 1, instance: 0, pid: 9, latenessMs: 3 }]);
    expect(torn).toBe(1);
  });
});

describe('scale cells', () => {
  it('runs every job count in every mode side by side, the 1-job reference first', () => {
    const cells = scaleCells([1000, 10_000], 5);
    expect(cells.map((c) => `${c.mode} ${c.jobsPerWake}×${c.wakes}`)).toEqual([
      ...['unbatched 1×5', 'batched 1×5', 'leader 1×5'],
      ...['unbatched 1000×1', 'batched 1000×1', 'leader 1000×1'],
      ...['unbatched 10000×1', 'batched 10000×1', 'leader 10000×1'],
    ]);
    expect(scaleCells([200], 2, true).map((c) => `${c.mode} ${c.jobsPerWake}`)).toEqual([
      ...['batched 1', 'unbatched 200', 'batched 200', 'leader 200'],
    ]);
  });

  it('spreads the jobs of several wakes over their wakes', () => {
    const cell = { fireAt: 1000, jobsPerWake: 2, wakeGapMs: 200 };
    expect([0, 1, 2, 3, 4].map((j) => jobFireAt(cell, j))).toEqual([1000, 1000, 1200, 1200, 1400]);
  });
});

describe('scale report', () => {
  const rows = [
    fleetRow({ jobsPerWake: 1, wakes: 5, jobs: 5, lateness: summarize([2, 4]) }),
    fleetRow({ jobsPerWake: 1000, jobs: 1000, lateness: summarize([10, 40]) }),
    fleetRow({ jobsPerWake: 10_000, jobs: 10_000, lateness: summarize([100, 500]) }),
    fleetRow({ mode: 'batched', unavailable: 'n/a: the lock has no claimMany' }),
  ];

  it('judges p99 at 1 000 jobs against the goal, and the growth to 10 000', () => {
    expect(scaleGoals(rows)).toEqual([
      {
        ...{ backend: 'redis', mode: 'unbatched', singleP99: 4, jobs: 1000, p99: 40 },
        ...{ vsSingle: 10, goalMs: 50, met: true, p99At10x: 500, growth: 12.5, growthMet: false },
      },
    ]);
    const table = goalsTable(scaleGoals(rows));
    expect(table).toContain(
      '| redis | unbatched | 4.00 | 1 000 | 40.0 | 10.00× | 50 | met | 500 |',
    );
    expect(table).toContain('| 12.50× | missed |');
  });

  it('does not judge a job count other than 1 000, nor a backend without a goal', () => {
    const quick = [fleetRow({ jobsPerWake: 200, jobs: 200, lateness: summarize([80]) })];
    expect(scaleGoals(quick)[0]).toMatchObject({ jobs: 200, p99: 80, met: null });
    const sqlite = [fleetRow({ backend: 'sqlite', jobsPerWake: 1000, lateness: summarize([9]) })];
    expect(scaleGoals(sqlite)[0]).toMatchObject({ goalMs: null, met: null });
  });

  it('shows calls per instance per wake, the memory label and n/a cells', () => {
    const table = scaleTable([
      fleetRow({ backend: 'memory', processes: 1 }),
      fleetRow({ mode: 'batched', unavailable: 'n/a: the lock has no claimMany' }),
      fleetRow({
        mode: 'batched',
        perWake: { claim: 0, claimMany: 4, batchedFires: 1000, release: 1 },
      }),
    ]);
    expect(table).toContain('| 0 / 4 (250 fires/call) | 1 |');
    expect(table).toContain(
      '| memory (4 schedulers, 1 process) | unbatched | 10 × 1 | 10 | 0 | 0 | 0 | 10.0 | 20.0 | 20.0 | 4 | 10 / 0 | 2.5 | 40.0 ms | ok |',
    );
    expect(table).toContain(
      '| redis (4 processes) | batched | 10 × 1 | n/a: the lock has no claimMany |',
    );
  });

  it('flags duplicates, missed jobs, torn ledger lines and failures, not n/a cells', () => {
    expect(
      scaleViolations([
        fleetRow({ duplicates: 1 }),
        fleetRow({ missed: 2, ledger: { files: 4, torn: 1 } }),
        fleetRow({ failure: 'worker exited' }),
        fleetRow({ unavailable: 'n/a: x', missed: 10 }),
      ]),
    ).toEqual([
      'scale redis unbatched 10 jobs × 1 wakes: 1 duplicate runs',
      'scale redis unbatched 10 jobs × 1 wakes: 2 jobs never ran',
      'scale redis unbatched 10 jobs × 1 wakes: 1 torn ledger lines',
      'scale redis unbatched 10 jobs × 1 wakes: did not run: worker exited',
    ]);
  });
});

describe('runFleet (real schedulers on one MemoryLock, real clock)', () => {
  const dir = mkdtempSync(join(os.tmpdir(), 'fleetcron-scale-test-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('runs every job once fleet-wide, one claim round trip per fire unbatched, judged from the ledger', async () => {
    const memory = new MemoryLock();
    const instances = [0, 1, 2].map((index) => ({ index, counted: countingLock(memory) }));
    const cell: ScaleCell = {
      ...{ prefix: 'unit', jobsPerWake: 30, wakes: 2, wakeGapMs: 100, mode: 'unbatched' },
      ...{ fireAt: Date.now() + 400, deadlineMs: 10_000, ledgerDir: dir },
    };
    const result = await runFleet(instances, cell);
    expect(result.complete).toBe(true);
    expect(result.won + result.lost + result.busy).toBe(60 * 3);
    const { lines, torn, files } = await readLedger(dir, 'unit');
    expect({ torn, files }).toEqual({ torn: 0, files: 3 });
    expect(new Set(lines.map((l) => l.job)).size).toBe(60);
    expect(lines).toHaveLength(60);
    for (const { calls } of result.calls) {
      // unbatched: one claim round trip per fire, never a batch
      expect(calls).toMatchObject({ claim: 60, claimMany: 0 });
    }
    const ranBy = new Map(lines.map((l) => [l.job, l.instance]));
    expect(await verifyCell(memory, cell, ranBy, new Set())).toBe('ok');
    ranBy.set(0, (ranBy.get(0)! + 1) % 3);
    expect(await verifyCell(memory, cell, ranBy, new Set())).toMatch(/^1 mismatches \(job 0:/);
  });

  it.runIf(canBatch(new MemoryLock()) && schedulerBatches())(
    'batched: fewer claim round trips than fires',
    async () => {
      const memory = new MemoryLock();
      const instances = [0, 1].map((index) => ({ index, counted: countingLock(memory) }));
      const cell: ScaleCell = {
        ...{ prefix: 'unit-b', jobsPerWake: 100, wakes: 1, wakeGapMs: 100, mode: 'batched' },
        ...{ fireAt: Date.now() + 400, deadlineMs: 10_000, ledgerDir: dir },
      };
      const result = await runFleet(instances, cell);
      expect(result.complete).toBe(true);
      const { lines } = await readLedger(dir, 'unit-b');
      expect(new Set(lines.map((l) => l.job)).size).toBe(100);
      expect(lines).toHaveLength(100);
      for (const { calls } of result.calls) {
        expect(calls.claimMany).toBeGreaterThan(0);
        expect(calls.claim + calls.claimMany).toBeLessThan(100);
      }
    },
  );
});

describe('leader mode', () => {
  const dir = mkdtempSync(join(os.tmpdir(), 'fleetcron-scale-leader-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('only the elected leader claims: one claim per fire fleet-wide, every job once', async () => {
    const memory = new MemoryLock();
    const elector = new MemoryElector();
    const instances = [0, 1, 2].map((index) => ({ index, counted: countingLock(memory), elector }));
    const cell: ScaleCell = {
      ...{ prefix: 'lead', jobsPerWake: 40, wakes: 1, wakeGapMs: 100, mode: 'leader' },
      ...{ fireAt: Date.now() + 600, deadlineMs: 10_000, ledgerDir: dir },
    };
    const result = await runFleet(instances, cell);
    expect(result.complete).toBe(true);
    expect(result.electedAfterMs).not.toBeNull();
    expect(result.electedAfterMs!).toBeLessThan(0); // before the fire
    const { lines } = await readLedger(dir, 'lead');
    expect(new Set(lines.map((l) => l.job)).size).toBe(40);
    expect(lines).toHaveLength(40);
    const sent = result.calls.map((c) => c.calls.claim + c.calls.claimManyRequests);
    expect(sent.reduce((a, b) => a + b, 0)).toBe(40);
    expect(sent.filter((n) => n > 0)).toEqual([40]); // one instance claimed everything
  });

  it('puts leader cells next to the per-fire cells of the same job count', () => {
    const out = leaderTable([
      fleetRow({ mode: 'batched', jobsPerWake: 1000, claimsPerFire: 4, lateness: summarize([30]) }),
      fleetRow({
        mode: 'leader',
        jobsPerWake: 1000,
        claimsPerFire: 1,
        electedAfterMs: -900,
        lateness: summarize([12]),
      }),
      fleetRow({ backend: 'sqlite', mode: 'leader', unavailable: 'n/a: no elector' }),
    ]);
    expect(out).toContain('| redis | 1 000 × 1 | batched | 4 | 30.0 | 1 | 12.0 | -900 |');
    expect(out).not.toContain('sqlite');
  });
});

describe('scale chart', () => {
  it('renders lateness p99 and round trips of the measured cells to SVG, not the n/a ones', async () => {
    const { renderSvg } = await import('../src/report/chart.js');
    const { scaleChartSpec } = await import('../src/report/scale.js');
    const spec = scaleChartSpec(
      [
        fleetRow({ backend: 'postgres', jobsPerWake: 1, lateness: summarize([0.2]) }),
        fleetRow({ backend: 'postgres', jobsPerWake: 1000, lateness: summarize([40]) }),
        fleetRow({ backend: 'etcd', mode: 'batched', unavailable: 'n/a: x' }),
      ],
      'scale chart test',
    );
    const values = (spec as { data: { values: { backend: string; p99: number }[] } }).data.values;
    expect(values.map((v) => [v.backend, v.p99])).toEqual([
      ['postgres', 1],
      ['postgres', 40],
    ]);
    const svg = await renderSvg(spec);
    expect(svg).toContain('<svg');
    expect(svg).toContain('scale chart test');
    expect(svg).toContain('postgres');
    expect(svg).not.toContain('etcd');
  });
});
