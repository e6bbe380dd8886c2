import { describe, expect, it } from 'vitest';
import {
  every,
  FakeClock,
  isFleetcronError,
  MemoryLock,
  Scheduler,
  type SchedulerOptions,
  type Trigger,
} from '../../src/index.js';
import { recordEvents } from './helpers.js';

/** Runs `fn` and returns what it threw (fails the test if it did not throw). */
function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  throw new Error('expected a throw');
}

describe('unknown option keys', () => {
  it('new Scheduler() names the unknown key and the nearest valid one', () => {
    const lock = new MemoryLock();
    const error = thrown(
      () => new Scheduler({ lock, leasMs: 5000 } as unknown as SchedulerOptions),
    );
    expect(isFleetcronError(error, 'INVALID_OPTION')).toBe(true);
    expect(error).toMatchObject({ field: 'leasMs' });
    expect((error as Error).message).toContain('did you mean "leaseMs"?');
    const other = thrown(
      () => new Scheduler({ lock, Logger: console } as unknown as SchedulerOptions),
    );
    expect((other as Error).message).toContain('did you mean "logger"?');
  });

  it('add() names the unknown key and the nearest valid one', () => {
    const s = new Scheduler({ lock: new MemoryLock() });
    const job = { name: 'j', trigger: every(1000), run: () => {}, overlaps: 'allow' };
    const error = thrown(() => s.add(job as never));
    expect(error).toMatchObject({ code: 'INVALID_OPTION', field: 'overlaps' });
    expect((error as Error).message).toContain('did you mean "overlap"?');
    expect(s.jobs()).toEqual([]);
  });
});

/** A trigger that fires every second until `stuckFrom`, then answers its own argument. */
function stuckTrigger(stuckFrom: number): Trigger {
  return {
    next: (after) =>
      after.getTime() >= stuckFrom ? new Date(after) : new Date(after.getTime() + 1000),
    describe: () => 'stuck',
  };
}

describe('a trigger that does not move forward', () => {
  it('is a typed error at add(), also when only its second fire is stuck', () => {
    const fake = new FakeClock();
    const s = new Scheduler({ lock: new MemoryLock({ clock: fake }), clock: fake });
    for (const stuckFrom of [fake.now(), fake.now() + 1000]) {
      const error = thrown(() => s.add({ name: 'j', trigger: stuckTrigger(stuckFrom), run() {} }));
      expect(error).toMatchObject({ code: 'INVALID_TRIGGER', field: 'trigger' });
      expect((error as Error).message).toContain('not after its argument');
    }
  });

  it('at run time stops that job with a trigger.failed event, never a spin', async () => {
    const fake = new FakeClock();
    const start = fake.now();
    const s = new Scheduler({ lock: new MemoryLock({ clock: fake }), clock: fake });
    const rec = recordEvents();
    const runs: number[] = [];
    s.add({
      name: 'j',
      trigger: stuckTrigger(start + 3000),
      run: (c) => void runs.push(+c.fireAt),
    });
    s.add({ name: 'other', trigger: every(1000), run() {} });
    s.start();
    await fake.advance(10_000);
    rec.stop();
    expect(runs).toEqual([start + 1000, start + 2000, start + 3000]);
    const failed = rec.events.filter((e) => e.type === 'trigger.failed');
    expect(failed).toHaveLength(1);
    expect(failed[0]).toMatchObject({ job: 'j', fireAt: start + 3000 });
    expect(s.jobs().find((j) => j.name === 'j')?.nextFireAt).toBeNull();
    expect(s.jobs().find((j) => j.name === 'other')?.nextFireAt).not.toBeNull();
    await s.stop();
  });
});

describe('add() during stop()', () => {
  it('throws SchedulerStoppedError; after stop() resolves add() works again', async () => {
    const fake = new FakeClock();
    const s = new Scheduler({ lock: new MemoryLock({ clock: fake }), clock: fake });
    s.add({
      name: 'slow',
      trigger: every(1000),
      run: (ctx) => ctx.clock.sleep(5_000),
    });
    s.start();
    await fake.advance(1000);
    const stopping = s.stop({ drainMs: 10_000 });
    const error = thrown(() => s.add({ name: 'late', trigger: every(1000), run() {} }));
    expect(isFleetcronError(error, 'SCHEDULER_STOPPED')).toBe(true);
    await fake.advance(5_000);
    await stopping;
    s.add({ name: 'late', trigger: every(1000), run() {} });
    expect(s.jobs().map((j) => j.name)).toEqual(['slow', 'late']);
  });
});

describe('job names', () => {
  const add = (name: string) => () =>
    new Scheduler({ lock: new MemoryLock() }).add({ name, trigger: every(1000), run() {} });

  it.each([
    ['a lone high surrogate', 'job\uD800'],
    ['a lone low surrogate', '\uDC00job'],
    ['a newline', 'a\nb'],
    ['a NUL', 'a\u0000'],
    ['DEL', 'a\u007F'],
    ['a C1 control', 'a\u009Fb'],
    ['a bidi override', 'invoice-\u202Eexe.fdp'],
    ['a bidi isolate', 'a\u2066b'],
    ['a direction mark', 'a\u200Fb'],
  ])('rejects %s with a typed error naming the field', (_, name) => {
    expect(thrown(add(name))).toMatchObject({ code: 'INVALID_OPTION', field: 'name' });
  });

  it.each(['🚀 launch', 'ünïcödé/job {x}', '日本語のジョブ', 'a b'])('accepts %s', (name) => {
    expect(add(name)).not.toThrow();
  });
});
