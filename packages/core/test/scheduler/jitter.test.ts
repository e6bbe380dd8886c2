import { describe, expect, it } from 'vitest';
import { definitionHash } from '../../src/backend.js';
import { cron, every, FakeClock, type JobContext, MemoryLock, Scheduler } from '../../src/index.js';
import { jitterOffset } from '../../src/scheduler/job/index.js';
import { settle } from './helpers.js';

describe('jitterMs: each fire claimed a fixed offset after its time, the same on every instance', () => {
  it('the offset is deterministic, spread over [0, jitterMs), and before the next fire', () => {
    const job = { name: 'report', trigger: every(60_000, { anchor: 0 }), jitterMs: 10_000 };
    const offsets = Array.from({ length: 1_000 }, (_, i) => jitterOffset(job, i * 60_000));
    expect(offsets, 'the same answer asked twice').toEqual(
      Array.from({ length: 1_000 }, (_, i) => jitterOffset(job, i * 60_000)),
    );
    expect(Math.min(...offsets)).toBeGreaterThanOrEqual(0);
    expect(Math.max(...offsets)).toBeLessThan(10_000);
    expect(Math.min(...offsets), 'spread: some near 0').toBeLessThan(1_000);
    expect(Math.max(...offsets), 'spread: some near the bound').toBeGreaterThan(9_000);
    const other = Array.from({ length: 20 }, (_, i) =>
      jitterOffset({ ...job, name: 'export' }, i * 60_000),
    );
    expect(other, 'another job gets other offsets').not.toEqual(offsets.slice(0, 20));
    const dense = { name: 'tick', trigger: every(1_000, { anchor: 0 }), jitterMs: 5_000 };
    for (let i = 0; i < 200; i++) {
      expect(jitterOffset(dense, i * 1_000), 'never at or past the next fire').toBeLessThan(1_000);
    }
    expect(jitterOffset({ ...job, jitterMs: 0 }, 60_000)).toBe(0);
  });

  it('two instances: the fire runs once, at fireAt + offset, claimed no earlier; ctx.fireAt is the fire time', async () => {
    const fake = new FakeClock(); // starts on a whole minute
    const lock = new MemoryLock({ clock: fake });
    const runs: Array<{ instanceId: string; fireAt: number; startedAt: number }> = [];
    const run = (ctx: JobContext) =>
      void runs.push({
        instanceId: ctx.instanceId,
        fireAt: ctx.fireAt.getTime(),
        startedAt: ctx.startedAt.getTime(),
      });
    const job = { name: 'report', trigger: cron('* * * * *'), run, jitterMs: 30_000 };
    const schedulers = ['a', 'b'].map((instanceId) => {
      const scheduler = new Scheduler({ lock, clock: fake, instanceId });
      scheduler.add({ ...job, trigger: cron('* * * * *') });
      scheduler.start();
      return scheduler;
    });
    await settle(fake);
    const fireAt = fake.now() + 60_000;
    const offset = jitterOffset({ ...job, trigger: cron('* * * * *') }, fireAt);
    expect(offset).toBeGreaterThan(0);
    await fake.advance(60_000 + offset - 1);
    expect(runs, 'nothing before the offset').toEqual([]);
    expect((await lock.inspect('report')).newestFireAt, 'not even a claim').not.toBe(fireAt);
    await fake.advance(1);
    await settle(fake);
    expect(runs.map((r) => [r.fireAt, r.startedAt - r.fireAt])).toEqual([[fireAt, offset]]);
    // past the next fire's offset, whatever it is, in steps (each wake arms the next)
    for (let t = 0; t < 60_000 + 30_000 - offset; t += 1_000) await fake.advance(1_000);
    expect(
      runs.map((r) => r.fireAt),
      'the next fire, once too',
    ).toEqual([fireAt, fireAt + 60_000]);
    const stopping = Promise.all(schedulers.map((s) => s.stop()));
    await fake.advance(1_000);
    await stopping;
  });

  it('jitterMs is checked at add(), published and part of the definition hash', () => {
    const scheduler = new Scheduler({ lock: new MemoryLock() });
    const add = (jitterMs: unknown) =>
      scheduler.add({
        name: `j${String(jitterMs)}`,
        trigger: every(1_000),
        run: () => {},
        jitterMs,
      } as never);
    for (const bad of [-1, 1.5, '100', 86_400_001]) {
      expect(() => add(bad), String(bad)).toThrow(
        expect.objectContaining({ code: 'INVALID_OPTION', field: 'jitterMs' }),
      );
    }
    // the lock's claim window (MemoryLock: 5 minutes) bounds it: a later claim would be stale
    expect(() => add(150_000)).not.toThrow();
    expect(() => add(150_001)).toThrow(/half the lock's claim window \(windowMs 300000 ms/);
    const base = { trigger: 'every(1000ms)', spec: null, leaseMs: 30_000, overlap: 'skip' };
    expect(definitionHash({ ...base, jitterMs: 0 }), 'no jitter: the hash of before').toBe(
      definitionHash(base),
    );
    expect(definitionHash({ ...base, jitterMs: 500 })).not.toBe(definitionHash(base));
  });
});
