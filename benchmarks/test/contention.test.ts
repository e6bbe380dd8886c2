import { MemoryLock } from '@fleetcron/core';
import { describe, expect, it } from 'vitest';
import { accountFires } from '../src/accounting.js';
import { fleetcronClaimer } from '../src/backends/types.js';
import { spread } from '../src/contention/pool.js';
import { mergeCell, verifyByInspect } from '../src/contention/run.js';
import { instanceOwner, runSlice } from '../src/contention/slice.js';
import { Progress } from '../src/progress.js';

const base = Date.now() - 60_000;

async function slice(lock: MemoryLock, n: number, key: string) {
  const claimers = Array.from({ length: n }, (_, i) =>
    fleetcronClaimer({ lock, close: async () => {} }, instanceOwner(i)),
  );
  return runSlice(claimers, {
    key,
    base,
    startAt: Date.now(),
    durationMs: 10_000,
    instances: claimers.map((_, i) => i),
    sampleCap: 100,
    maxSteps: 200,
  });
}

describe('spread', () => {
  it('deals instances round-robin over at most that many workers', () => {
    expect(spread(5, 2)).toEqual([
      [0, 2, 4],
      [1, 3],
    ]);
    expect(spread(1, 2)).toEqual([[0]]);
  });
});

describe('runSlice on the reference lock', () => {
  it('every fire has one winner; the account and inspect agree', async () => {
    const lock = new MemoryLock();
    const result = await slice(lock, 3, 'k1');
    expect(result.steps).toBe(200); // maxSteps before the deadline
    expect(result.claims).toBe(600);
    expect(result.won).toBe(200);
    expect(result.lost).toBe(400);
    expect(result.latencies).toHaveLength(100); // sampled down to the cap
    const account = accountFires([
      { steps: result.steps, wins: result.wins, errors: result.errorFires },
    ]);
    expect(account).toMatchObject({ fires: 200, exactlyOnce: 200, duplicates: 0, missed: 0 });
    expect(await verifyByInspect(lock, 'k1', base, [result])).toBe('ok');
  });

  it('inspect catches a winner that the backend does not know', async () => {
    const lock = new MemoryLock();
    const result = await slice(lock, 2, 'k2');
    const forged = { ...result, winners: result.winners.map((w) => (w === 0 ? 1 : 0)) };
    expect(await verifyByInspect(lock, 'k2', base, [forged])).toMatch(/^200 mismatches/);
  });

  it('mergeCell sums the rounds and takes the median throughput', async () => {
    const lock = new MemoryLock();
    const rounds = [];
    for (const key of ['m1', 'm2', 'm3']) {
      const result = await slice(lock, 2, key);
      rounds.push({
        results: [result],
        account: accountFires([
          { steps: result.steps, wins: result.wins, errors: result.errorFires },
        ]),
        verified: 'ok',
      });
    }
    const merged = mergeCell(
      { backend: 'memory', variant: 'fleetcron', instances: 2, workers: 0 },
      rounds,
    );
    expect(merged.claims).toBe(1200);
    expect(merged.account.fires).toBe(600);
    expect(merged.account.duplicates).toBe(0);
    expect(merged.rounds).toBe(3);
    expect(merged.claimsPerSecRounds).toHaveLength(3);
    expect([...merged.claimsPerSecRounds].sort((a, b) => a - b)[1]).toBe(merged.claimsPerSec);
    expect(merged.verified).toBe('ok');
  });
});

describe('Progress without a TTY', () => {
  it('prints one numbered line per step', () => {
    const lines: string[] = [];
    const progress = new Progress(12, false, (l) => lines.push(l));
    progress.status('starting redis');
    progress.step('redis fleetcron n=1', '2 000 claims/s');
    progress.skip(3);
    progress.step('redis floor n=1');
    progress.stop();
    expect(lines).toEqual([
      '      starting redis',
      '[ 1/12] redis fleetcron n=1: 2 000 claims/s',
      '[ 5/12] redis floor n=1',
    ]);
  });
});
