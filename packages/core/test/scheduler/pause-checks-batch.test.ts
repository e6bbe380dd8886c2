import { describe, expect, it } from 'vitest';
import {
  every,
  FakeClock,
  type JobState,
  MemoryLock,
  MemoryStore,
  Scheduler,
} from '../../src/index.js';
import { JOB_STATE_BATCH_SIZE } from '../../src/store.js';

/** A MemoryStore with `getJobStates` (as a store with round trips has), counting its calls. */
class BatchingStore extends MemoryStore {
  readonly batches: number[] = [];
  singles = 0;
  override async getJobState(job: string): Promise<JobState> {
    this.singles++;
    return super.getJobState(job);
  }
  async getJobStates(jobs: readonly string[]): Promise<JobState[]> {
    this.batches.push(jobs.length);
    return Promise.all(jobs.map((job) => super.getJobState(job)));
  }
}

describe('paused flags of the fires of one wake are read together (store.getJobStates)', () => {
  it(`1,200 jobs due together: reads in batches of ${JOB_STATE_BATCH_SIZE}, no single reads; paused jobs skip`, async () => {
    const fake = new FakeClock(0);
    const lock = new MemoryLock({ clock: fake });
    const store = new BatchingStore({ clock: fake });
    for (let i = 0; i < 1200; i += 100) await store.setPaused(`job-${i}`, true, { by: 'test' });
    const s = new Scheduler({ lock, store, clock: fake, instanceId: 'a' });
    const ran = new Set<string>();
    for (let i = 0; i < 1200; i++) {
      s.add({ name: `job-${i}`, trigger: every(60_000), run: (ctx) => void ran.add(ctx.job) });
    }
    s.start();
    await fake.advance(61_000);
    expect(store.singles).toBe(0);
    expect([...store.batches].sort((a, b) => b - a)).toEqual([500, 500, 200]);
    expect(ran.size).toBe(1188); // 12 paused
    for (let i = 0; i < 1200; i += 100) expect(ran.has(`job-${i}`)).toBe(false);
    const stopping = s.stop();
    await fake.advance(0);
    await stopping;
  });

  it('a failing batch read runs the fires anyway (not paused), as a failing single read does', async () => {
    const fake = new FakeClock(0);
    const lock = new MemoryLock({ clock: fake });
    const store = new BatchingStore({ clock: fake });
    store.getJobStates = async () => {
      throw new Error('store down');
    };
    const s = new Scheduler({ lock, store, clock: fake, instanceId: 'a' });
    const ran = new Set<string>();
    for (let i = 0; i < 10; i++) {
      s.add({ name: `job-${i}`, trigger: every(60_000), run: (ctx) => void ran.add(ctx.job) });
    }
    s.start();
    await fake.advance(61_000);
    expect(ran.size).toBe(10);
    const stopping = s.stop();
    await fake.advance(0);
    await stopping;
  });
});
