import { describe, expect, it } from 'vitest';
import {
  every,
  FakeClock,
  type HistoryPage,
  type HistoryQuery,
  MemoryLock,
  MemoryStore,
  Scheduler,
} from '../../src/index.js';
import {
  HOLDER_LOST_CHECKS_PER_HEARTBEAT,
  HOLDER_LOST_JOBS_PER_SWEEP,
} from '../../src/scheduler/fleet-control/holder-lost.js';

/** A MemoryStore that counts the holder-lost sweep's reads (history of `running` rows). */
class CountingStore extends MemoryStore {
  runningReads = 0;
  override async history(job: string, query?: HistoryQuery): Promise<HistoryPage> {
    if (query?.status === 'running') this.runningReads++;
    return super.history(job, query);
  }
}

describe('holder lost at scale: checks started by fires are bounded per heartbeat', () => {
  it(`500 jobs due together: at most ${HOLDER_LOST_CHECKS_PER_HEARTBEAT} fire checks + one sweep between two heartbeats, every fire runs`, async () => {
    const fake = new FakeClock(0);
    const lock = new MemoryLock({ clock: fake });
    const store = new CountingStore({ clock: fake });
    const s = new Scheduler({ lock, store, clock: fake, instanceId: 'a', heartbeatMs: 60_000 });
    const ran = new Set<string>();
    for (let i = 0; i < 500; i++) {
      s.add({ name: `job-${i}`, trigger: every(10_000), run: (ctx) => void ran.add(ctx.job) });
    }
    s.start();
    await fake.advance(1_000); // the first heartbeat (its sweep) is done
    const afterFirstBeat = store.runningReads;
    expect(afterFirstBeat).toBe(HOLDER_LOST_JOBS_PER_SWEEP);
    await fake.advance(20_000); // two fire times of 500 jobs, no heartbeat between
    expect(ran.size).toBe(500);
    expect(store.runningReads - afterFirstBeat).toBe(HOLDER_LOST_CHECKS_PER_HEARTBEAT);
    await fake.advance(40_000); // the next heartbeat: its sweep, and a new budget for fires
    expect(store.runningReads - afterFirstBeat).toBe(
      2 * HOLDER_LOST_CHECKS_PER_HEARTBEAT + HOLDER_LOST_JOBS_PER_SWEEP,
    );
    const stopping = s.stop();
    await fake.advance(0);
    await stopping;
  });
});
