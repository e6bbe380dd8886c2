import { describe, expect, it } from 'vitest';
import {
  at,
  type Execution,
  FakeClock,
  MemoryLock,
  MemoryStore,
  Scheduler,
} from '../../src/index.js';
import { allHistory, settle } from './helpers.js';

/** A MemoryStore with `recordMany`, counting calls (a store whose calls are round trips). */
class BatchingStore extends MemoryStore {
  batches: number[] = [];
  singles = 0;
  /** The index of a batch that fails (a connection reset). */
  failingBatch = -1;
  async recordMany(executions: readonly Execution[]): Promise<void> {
    this.batches.push(executions.length);
    if (this.batches.length - 1 === this.failingBatch) throw new Error('connection reset');
    for (const execution of executions) await super.record(execution);
  }
  override async record(execution: Execution): Promise<void> {
    this.singles++;
    await super.record(execution);
  }
}

async function burst(jobs: number, store: BatchingStore) {
  const fake = new FakeClock(0);
  const lock = new MemoryLock({ clock: fake });
  const scheduler = new Scheduler({ lock, store, clock: fake, instanceId: 'a' });
  for (let i = 0; i < jobs; i++) {
    scheduler.add({ name: `job-${i}`, trigger: at(new Date(10_000)), run: () => {} });
  }
  scheduler.start();
  await fake.advance(10_000);
  await settle(fake, 30);
  await fake.advance(1_000); // an outcome write that failed is tried again 100 ms later
  await settle(fake, 10);
  const stopping = scheduler.stop();
  await settle(fake, 10);
  await stopping;
  const rows = await Promise.all(
    Array.from({ length: jobs }, (_, i) => allHistory(store, `job-${i}`)),
  );
  return rows.flat();
}

describe('history writes of one wake go out together (store.recordMany)', () => {
  it('600 fires due together: start rows and outcome rows in batches of at most 256, no single writes', async () => {
    const store = new BatchingStore();
    const rows = await burst(600, store);
    expect(rows.map((r) => r.status)).toEqual(Array(600).fill('succeeded'));
    expect(store.singles).toBe(0);
    expect(Math.max(...store.batches)).toBeLessThanOrEqual(256);
    // 1,200 rows (start and outcome of each fire) in a handful of calls, not 1,200
    expect(store.batches.reduce((n, b) => n + b, 0)).toBe(1200);
    expect(store.batches.length).toBeLessThanOrEqual(12);
  });

  it('an outcome batch that fails is tried again row by row: every outcome lands', async () => {
    const store = new BatchingStore();
    store.failingBatch = 1; // batch 0: the 50 start rows; batch 1: their outcomes
    const rows = await burst(50, store);
    expect(store.batches).toEqual([50, 50]);
    expect(rows.map((r) => r.status)).toEqual(Array(50).fill('succeeded'));
    expect(store.singles).toBe(50);
  });
});
