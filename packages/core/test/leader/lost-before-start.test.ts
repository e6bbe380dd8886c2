import { describe, expect, it } from 'vitest';
import {
  every,
  FakeClock,
  type JobState,
  MemoryElector,
  MemoryLock,
  MemoryStore,
  Scheduler,
} from '../../src/index.js';
import { FlakyElector } from './fleet-helpers.js';

/** A MemoryStore whose paused check waits while `held` (the run cannot start meanwhile). */
class HeldStore extends MemoryStore {
  held: Promise<void> | null = null;
  override async getJobState(job: string): Promise<JobState> {
    await this.held;
    return super.getJobState(job);
  }
}

describe('leader mode: a term lost between the claim and the start', () => {
  it('the won fire is not run: recorded skipped (stopping) and its claim handed back', async () => {
    const fake = new FakeClock(0);
    const lock = new MemoryLock({ clock: fake });
    const elector = new FlakyElector(new MemoryElector({ clock: fake }));
    const store = new HeldStore({ clock: fake });
    const runs: number[] = [];
    const scheduler = new Scheduler({
      ...{ lock, store, clock: fake, instanceId: 'solo', heartbeatMs: 10_000 },
      ...{ mode: 'leader', elector, leaderTtlMs: 3_000 },
    });
    scheduler.add({
      ...{ name: 'job', trigger: every(60_000), leaseMs: 60_000 },
      run: (ctx) => {
        runs.push(ctx.fireAt.getTime());
      },
    });
    let release = () => {};
    store.held = new Promise<void>((resolve) => {
      release = resolve;
    });
    scheduler.start();
    await fake.advance(59_000);
    expect(scheduler.isLeader).toBe(true);
    await fake.advance(1_100); // fire 60,000 claimed and won; its paused check waits
    expect((await lock.inspect('job')).fires.map((f) => f.owner)).toEqual(['solo']);
    elector.down.add('solo'); // renewals fail: the term ends at its local deadline
    await fake.advance(4_000);
    expect(scheduler.isLeader).toBe(false);
    release();
    await fake.advance(100);
    expect(runs).toEqual([]);
    const [row] = (await store.history('job')).executions;
    expect(row).toMatchObject({ fireAt: 60_000, status: 'skipped', reason: 'stopping' });
    // handed back: another leader could still claim fire 60,000 inside the window
    expect((await lock.inspect('job')).fires).toEqual([]);
    elector.down.delete('solo');
    const stopping = scheduler.stop();
    await fake.advance(1_000);
    await stopping;
  });
});
