import { describe, expect, it } from 'vitest';
import { at, FakeClock, type Logger, MemoryLock, MemoryStore, Scheduler } from '../../src/index.js';
import { allHistory, BrokenStore } from './helpers.js';

function capturingLogger(): Logger & { errors: Array<{ msg: string; meta: unknown }> } {
  const errors: Array<{ msg: string; meta: unknown }> = [];
  return {
    errors,
    debug: () => {},
    info: () => {},
    warn: () => {},
    error: (msg: string, meta?: unknown) => {
      errors.push({ msg, meta });
    },
  };
}

describe('outcome writes during a store outage', () => {
  it('are retried until the store is back within the drain: no row stays running', async () => {
    const fake = new FakeClock();
    const inner = new MemoryStore();
    const store = new BrokenStore(inner);
    store.failing = false;
    const s = new Scheduler({ lock: new MemoryLock({ clock: fake }), store, clock: fake });
    s.add({
      name: 'job',
      trigger: at(fake.now() + 1_000),
      run: async (ctx) => {
        store.failing = true; // the store goes down while the job runs
        await ctx.clock.sleep(500);
      },
    });
    s.start();
    await fake.advance(1_000);
    expect((await allHistory(inner, 'job')).map((e) => e.status)).toEqual(['running']);
    await fake.advance(500); // the job ends; its outcome write fails
    await fake.advance(3_000); // retried, still failing
    expect((await allHistory(inner, 'job')).map((e) => e.status)).toEqual(['running']);
    const stopping = s.stop({ drainMs: 20_000 });
    await fake.advance(2_000);
    store.failing = false; // back within the drain
    await fake.advance(6_000);
    await stopping;
    expect((await allHistory(inner, 'job')).map((e) => e.status)).toEqual(['succeeded']);
  });

  it('an outcome that could not be written by the end of stop() is logged with its id', async () => {
    const fake = new FakeClock();
    const inner = new MemoryStore();
    const store = new BrokenStore(inner);
    store.failing = false;
    const logger = capturingLogger();
    const s = new Scheduler({
      lock: new MemoryLock({ clock: fake }),
      ...{ store, clock: fake, logger },
    });
    s.add({
      name: 'job',
      trigger: at(fake.now() + 1_000),
      run: () => {
        store.failing = true;
      },
    });
    s.start();
    await fake.advance(1_000);
    const [row] = await allHistory(inner, 'job');
    const stopping = s.stop({ drainMs: 1_000 });
    await fake.advance(10_000);
    await stopping;
    const lost = logger.errors.filter((e) => e.msg.includes('could not be written'));
    expect(lost).toHaveLength(1);
    expect(lost[0]?.meta).toMatchObject({ id: row?.id, job: 'job', status: 'succeeded' });
    expect(fake.pendingTimers()).toBe(0);
  });
});
