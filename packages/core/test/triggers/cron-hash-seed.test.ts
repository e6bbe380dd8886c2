import { describe, expect, it } from 'vitest';
import { nextFires, registeredJob, triggerFromSpec } from '../../src/backend.js';
import { cron, FakeClock, MemoryLock, MemoryStore, Scheduler } from '../../src/index.js';

const FROM = new Date(Date.UTC(2026, 0, 1));
const minuteOf = (d: Date | null) => d?.getUTCMinutes();

describe('H seeded by the job name', () => {
  it('different seeds spread H * * * * over the hour; one seed always gives the same minute', () => {
    const names = Array.from({ length: 20 }, (_, i) => `job-${i}`);
    const minutes = names.map((seed) => minuteOf(cron('H * * * *', { seed }).next(FROM)));
    expect(new Set(minutes).size).toBeGreaterThan(8);
    expect(names.map((seed) => minuteOf(cron('H * * * *', { seed }).next(FROM)))).toEqual(minutes);
  });

  it('describe() names the minute it chose, and the seed', () => {
    const trigger = cron('H * * * *', { seed: 'report' });
    const minute = minuteOf(trigger.next(FROM));
    expect(trigger.describe()).toBe(
      `cron(H * * * * UTC; H: 0 ${minute} * * * * seeded by "report")`,
    );
    expect(cron('5 * * * *').describe()).toBe('cron(5 * * * * UTC)'); // no H: unchanged
    expect(cron('0 0 * * THU').hashed).toBe(false);
  });

  it('Scheduler.add() seeds an unseeded H trigger with the job name; the spec carries the seed', async () => {
    const fake = new FakeClock(FROM);
    const s = new Scheduler({ lock: new MemoryLock({ clock: fake }), store: new MemoryStore() });
    const shared = cron('H * * * *');
    const names = ['alpha', 'beta', 'gamma', 'delta'];
    for (const name of names) s.add({ name, trigger: shared, run: () => {} });
    const byName = new Map(s.jobs().map((j) => [j.name, j]));
    for (const name of names) {
      const own = cron('H * * * *', { seed: name });
      expect(byName.get(name)?.trigger).toBe(own.describe());
      const job = registeredJob({ name, trigger: own, leaseMs: 30_000, overlap: 'skip' });
      expect(job.spec).toEqual({ kind: 'cron', expression: 'H * * * *', tz: 'UTC', seed: name });
      // a process that does not define the job recomputes the same fires from the spec
      const expected = [own.next(FROM)!.getTime()];
      expect(nextFires(job.spec!, FROM.getTime(), 1)).toEqual(expected);
      expect(triggerFromSpec(job.spec!).next(FROM)?.getTime()).toBe(expected[0]);
    }
    const minutes = names.map((n) => minuteOf(cron('H * * * *', { seed: n }).next(FROM)));
    expect(new Set(minutes).size).toBeGreaterThan(1);
    const unseeded = minuteOf(shared.next(FROM));
    expect(minutes.some((m) => m !== unseeded)).toBe(true);
  });

  it('an explicit seed is kept; a non-string seed is a typed error', () => {
    const s = new Scheduler({ lock: new MemoryLock() });
    const mine = cron('H H * * *', { seed: 'fixed' });
    s.add({ name: 'x', trigger: mine, run: () => {} });
    expect(s.jobs()[0]?.trigger).toBe(mine.describe());
    expect(() => cron('H * * * *', { seed: 5 as unknown as string })).toThrow(
      expect.objectContaining({ code: 'INVALID_OPTION', field: 'seed' }),
    );
  });
});
