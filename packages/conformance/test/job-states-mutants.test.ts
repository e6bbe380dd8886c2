import { type JobState, MemoryStore, type Store } from '@fleetcron/core';
import { describe, expect, it } from 'vitest';
import { storeScenarios } from '../src/index.js';
import { memoryStoreFixture } from './memory-fixture.js';

/** The reference: `getJobStates` is `getJobState` of each name, in order. */
class ReadsEach extends MemoryStore {
  async getJobStates(jobs: readonly string[]): Promise<JobState[]> {
    return Promise.all(jobs.map((job) => this.getJobState(job)));
  }
}

/** (j1) Answers each distinct name once: a repeated name shifts every later answer. */
class DistinctOnly extends MemoryStore {
  async getJobStates(jobs: readonly string[]): Promise<JobState[]> {
    return Promise.all([...new Set(jobs)].map((job) => this.getJobState(job)));
  }
}

/** (j2) Answers from a cache filled by the first read: a later pause is not seen. */
class StaleCache extends MemoryStore {
  private readonly cache = new Map<string, JobState>();
  async getJobStates(jobs: readonly string[]): Promise<JobState[]> {
    const states: JobState[] = [];
    for (const job of jobs) {
      let state = this.cache.get(job);
      if (state === undefined) {
        state = await this.getJobState(job);
        this.cache.set(job, state);
      }
      states.push(state);
    }
    return states;
  }
}

/** (j3) Reads only the first 500 names (one scheduler batch); the rest read as never seen. */
class FirstBatchOnly extends MemoryStore {
  async getJobStates(jobs: readonly string[]): Promise<JobState[]> {
    return Promise.all(
      jobs.map((job, i) =>
        i < 500
          ? this.getJobState(job)
          : ({
              ...{ job, paused: false, pausedBy: null, pausedAt: null },
              ...{ lastStatus: null, lastFireAt: null, lastFinishedAt: null },
            } as JobState),
      ),
    );
  }
}

describe('the getJobStates store scenario', () => {
  for (const [title, Store, message] of [
    ['(j1) a repeated name answered once', DistinctOnly, /getJobStates\(\)\[\d+\]|length/],
    ['(j2) answers from a stale cache', StaleCache, /expected false to be true/],
    ['(j3) only the first 500 names read', FirstBatchOnly, /getJobStates\(\)\[\d+\]/],
  ] as const) {
    it(`${title}: jobStatesAsJobState fails`, async () => {
      const create = memoryStoreFixture(() => new Store());
      await expect(
        storeScenarios.jobStatesAsJobState.run({ name: 'mutant', create }),
      ).rejects.toThrow(message);
    });
  }

  it('passes on MemoryStore with getJobStates as getJobState of each, and on one without it', async () => {
    await storeScenarios.jobStatesAsJobState.run({
      name: 'reference',
      create: memoryStoreFixture(() => new ReadsEach()),
    });
    await storeScenarios.jobStatesAsJobState.run({
      name: 'without',
      create: memoryStoreFixture(() => new MemoryStore()),
    });
    expect((new MemoryStore() as Store).getJobStates).toBeUndefined();
  });
});
