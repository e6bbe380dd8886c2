import { describe, expect, it } from 'vitest';
import { cron, every, FakeClock, MemoryLock, Scheduler } from '../../src/index.js';

describe('one timer for every job', () => {
  it('10,000 jobs (every and cron) hold exactly one pending timer', async () => {
    const fake = new FakeClock();
    const s = new Scheduler({ lock: new MemoryLock({ clock: fake }), clock: fake });
    s.start();
    let runs = 0;
    const crons = ['* * * * *', '*/2 * * * *', '30 * * * * *', '0 */5 * * * *', '@hourly'];
    for (let i = 0; i < 10_000; i++) {
      const trigger =
        i % 2 === 0
          ? every(60_000, { anchor: i * 7 })
          : cron(crons[i % crons.length]!, { tz: i % 3 === 0 ? 'Europe/Berlin' : 'UTC' });
      s.add({ name: `job-${i}`, trigger, run: () => void runs++ });
      if (i % 1000 === 999) {
        await fake.flush(); // let the process breathe between batches
        expect(fake.pendingTimers()).toBe(1);
      }
    }
    expect(s.jobs()).toHaveLength(10_000);
    expect(fake.pendingTimers()).toBe(1);
    await fake.advance(61_000);
    expect(runs).toBeGreaterThanOrEqual(5_000 + 2_000);
    expect(fake.pendingTimers()).toBe(1);
    expect(s.remove('job-0')).toBe(true);
    expect(s.remove('job-0')).toBe(false);
    expect(fake.pendingTimers()).toBe(1);
    await s.stop();
    expect(fake.pendingTimers()).toBe(0);
  }, 60_000);
});
