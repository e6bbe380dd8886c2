import { describe, expect, it } from 'vitest';
import { partKey } from '../../src/backend.js';
import {
  every,
  FakeClock,
  type JobContext,
  MemoryLock,
  MemoryStore,
  Scheduler,
} from '../../src/index.js';
import { allHistory } from '../scheduler/helpers.js';

const HOUR = 3_600_000;

describe('holder lost: a part of a sharded fire whose holder died', () => {
  it('is recorded lease_lost and only that part reruns (same ctx.shard); a live part is left', async () => {
    const fake = new FakeClock(1_000);
    const lock = new MemoryLock({ clock: fake });
    const store = new MemoryStore({ clock: fake });
    const fireAt = 500;
    // instance `dead` claimed parts 1 and 2 of fire 500 and recorded them running, then died:
    // part 1's lease (3 s) runs out; part 2's (1 h) is still live on its part key
    for (const [index, leaseMs] of [
      [1, 3_000],
      [2, HOUR],
    ] as const) {
      const key = partKey('job', index, 3);
      const claim = await lock.claim({ key, fireAt, owner: 'dead', leaseMs, exclusive: true });
      if (claim.status !== 'won') throw new Error('setup: claim not won');
      await store.record({
        ...{ id: `row-${index}`, job: 'job', fireAt, instanceId: 'dead', status: 'running' },
        ...{ attempt: 1, token: claim.lease.token, startedAt: fireAt, finishedAt: null },
        ...{ error: null, reason: null, shard: { index, count: 3 } },
      });
    }
    const runs: Array<{ instanceId: string; shard: JobContext['shard']; recovery: unknown }> = [];
    const schedulers = ['a', 'b'].map((instanceId) => {
      const s = new Scheduler({ lock, store, clock: fake, instanceId, heartbeatMs: 1_000 });
      s.add({
        ...{ name: 'job', trigger: every(HOUR), shards: 3, onHolderLost: 'rerun' },
        run: (ctx) => {
          runs.push({ instanceId: ctx.instanceId, shard: ctx.shard, recovery: ctx.recovery });
        },
      });
      s.start();
      return s;
    });
    await fake.advance(10_000);
    const stopping = Promise.all(schedulers.map((s) => s.stop()));
    await fake.advance(0);
    await stopping;

    const rows = await allHistory(store, 'job');
    expect(rows.find((r) => r.id === 'row-1')).toMatchObject({ status: 'lease_lost' });
    expect(rows.find((r) => r.id === 'row-2')).toMatchObject({ status: 'running' });
    // exactly one rerun, of part 1 only, on a live instance
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({ shard: { index: 1, count: 3 }, recovery: true });
    const rerun = rows.filter((r) => r.requestedBy?.startsWith('holder-lost:'));
    expect(rerun.map((r) => [r.status, r.shard])).toEqual([['succeeded', { index: 1, count: 3 }]]);
  });
});
