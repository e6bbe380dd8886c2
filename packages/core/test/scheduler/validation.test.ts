import { describe, expect, it } from 'vitest';
import {
  at,
  type Clock,
  every,
  FakeClock,
  type Lock,
  MemoryLock,
  MemoryStore,
  Scheduler,
  type SchedulerOptions,
} from '../../src/index.js';
import { FlakyLock, withoutMarkReads } from './helpers.js';

/** A lock that declares etcd-like capabilities: leases of at least 2 s in whole seconds. */
function coarseLock(): Lock {
  const lock = new FlakyLock(new MemoryLock());
  Object.defineProperty(lock, 'capabilities', {
    value: { minLeaseMs: 2000, leaseGranularityMs: 1000, durable: true, clock: 'client' },
  });
  return lock;
}

const job = { name: 'job', trigger: every(1000), run: () => {} };

function expectError(fn: () => unknown, code: string, field: string): void {
  let thrown: unknown = null;
  try {
    fn();
  } catch (error) {
    thrown = error;
  }
  expect(thrown).toMatchObject({ code, field });
}

describe('construction validates options (Guarantee 7)', () => {
  const lock = new MemoryLock();
  const cases: [string, unknown, string, string][] = [
    ['no options', undefined, 'INVALID_OPTION', 'options'],
    ['no lock', {}, 'INVALID_OPTION', 'lock'],
    ['lock without methods', { lock: { claim() {} } }, 'INVALID_OPTION', 'lock'],
    ['zero leaseMs', { lock, leaseMs: 0 }, 'INVALID_OPTION', 'leaseMs'],
    ['NaN leaseMs', { lock, leaseMs: Number.NaN }, 'INVALID_OPTION', 'leaseMs'],
    ['negative drainMs', { lock, drainMs: -1 }, 'INVALID_OPTION', 'drainMs'],
    ['empty instanceId', { lock, instanceId: '' }, 'INVALID_OPTION', 'instanceId'],
    ['bad clock', { lock, clock: { now: () => 0 } }, 'INVALID_OPTION', 'clock'],
    ['bad store', { lock, store: {} }, 'INVALID_OPTION', 'store'],
    ['bad middleware', { lock, middleware: [() => {}, 'x'] }, 'INVALID_OPTION', 'middleware[1]'],
    ['bad logger', { lock, logger: {} }, 'INVALID_OPTION', 'logger'],
  ];
  it.each(cases)('%s', (_name, options, code, field) => {
    expectError(() => new Scheduler(options as SchedulerOptions), code, field);
  });

  it('leaseMs below the backend minimum is LEASE_TOO_SHORT', () => {
    expectError(
      () => new Scheduler({ lock: coarseLock(), leaseMs: 1500 }),
      'LEASE_TOO_SHORT',
      'leaseMs',
    );
  });

  it('accepts a valid setup and defaults', () => {
    const s = new Scheduler({ lock, store: new MemoryStore() });
    expect(s.instanceId).toMatch(/^.+-\d+-[0-9a-f]{8}$/);
    expect(s.state).toBe('idle');
  });
});

describe('add() validates job definitions (Guarantee 7)', () => {
  const s = new Scheduler({ lock: coarseLock() });
  s.add({ ...job, name: 'taken' });
  const cases: [string, unknown, string, string][] = [
    ['missing name', { ...job, name: undefined }, 'INVALID_OPTION', 'name'],
    ['empty name', { ...job, name: '' }, 'INVALID_OPTION', 'name'],
    ['name too long', { ...job, name: 'x'.repeat(513) }, 'INVALID_OPTION', 'name'],
    ['duplicate name', { ...job, name: 'taken' }, 'DUPLICATE_JOB', 'name'],
    ['no trigger', { ...job, trigger: undefined }, 'INVALID_OPTION', 'trigger'],
    ['trigger not a Trigger', { ...job, trigger: '* * * * *' }, 'INVALID_OPTION', 'trigger'],
    [
      'trigger that throws',
      {
        ...job,
        trigger: {
          next: () => {
            throw new Error('bad');
          },
          describe: () => 'bad',
        },
      },
      'INVALID_OPTION',
      'trigger',
    ],
    [
      'trigger returning garbage',
      { ...job, trigger: { next: () => 42, describe: () => 'bad' } },
      'INVALID_OPTION',
      'trigger',
    ],
    ['run not a function', { ...job, run: 'go' }, 'INVALID_OPTION', 'run'],
    ['negative leaseMs', { ...job, leaseMs: -5 }, 'INVALID_OPTION', 'leaseMs'],
    ['zero leaseMs', { ...job, leaseMs: 0 }, 'INVALID_OPTION', 'leaseMs'],
    ['leaseMs below backend minimum', { ...job, leaseMs: 1500 }, 'LEASE_TOO_SHORT', 'leaseMs'],
    ['bad overlap', { ...job, overlap: 'queue' }, 'INVALID_OPTION', 'overlap'],
    ['bad job middleware', { ...job, middleware: [42] }, 'INVALID_OPTION', 'middleware[0]'],
    ['not an object', null, 'INVALID_OPTION', 'job'],
  ];
  it.each(cases)('%s', (_name, definition, code, field) => {
    expectError(() => s.add(definition as typeof job), code, field);
    expect(s.jobs().map((j) => j.name)).toEqual(['taken']);
  });

  it('rounds leaseMs up to the backend granularity', () => {
    const t = new Scheduler({ lock: coarseLock(), leaseMs: 2001 });
    t.add({ ...job, name: 'a', leaseMs: 2500 });
    t.add({ ...job, name: 'b' });
    expect(t.jobs().map((j) => [j.name, j.leaseMs, j.overlap])).toEqual([
      ['a', 3000, 'skip'],
      ['b', 3000, 'skip'],
    ]);
  });
});

describe('timing', () => {
  it('fires an at() 60 days ahead at the right time (delays beyond 2^31-1 ms)', async () => {
    const fake = new FakeClock();
    const delays: number[] = [];
    const spy: Clock = {
      now: () => fake.now(),
      monotonic: () => fake.monotonic(),
      setTimer: (cb, ms) => {
        delays.push(ms);
        return fake.setTimer(cb, ms);
      },
      clearTimer: (h) => fake.clearTimer(h),
      sleep: (ms, signal) => fake.sleep(ms, signal),
    };
    const s = new Scheduler({ lock: new MemoryLock({ clock: fake }), clock: spy });
    const when = fake.now() + 60 * 24 * 3600_000;
    const ran: number[] = [];
    s.add({ name: 'far', trigger: at(when), run: () => void ran.push(fake.now()) });
    s.start();
    expect(s.jobs()[0]!.nextFireAt?.getTime()).toBe(when);
    await fake.advance(60 * 24 * 3600_000 - 1);
    expect(ran).toEqual([]);
    expect(fake.pendingTimers()).toBe(1);
    await fake.advance(1);
    expect(ran).toEqual([when]);
    expect(Math.max(...delays)).toBeLessThanOrEqual(2 ** 31 - 1);
    expect(s.jobs()[0]!.nextFireAt).toBeNull(); // done
    expect(fake.pendingTimers()).toBe(0);
    await s.stop();
  }, 60_000);

  it('re-arms when the wall clock jumps back instead of firing early', async () => {
    const fake = new FakeClock();
    const s = new Scheduler({ lock: new MemoryLock({ clock: fake }), clock: fake });
    const when = fake.now() + 20_000;
    const ran: number[] = [];
    s.add({ name: 'once', trigger: at(when), run: () => void ran.push(fake.now()) });
    s.add({ name: 'tick', trigger: every(1000), run: (c) => void ran.push(-c.fireAt.getTime()) });
    s.start();
    await fake.advance(10_000);
    fake.jump(-60_000); // NTP steps the clock back a minute
    await fake.advance(15_000); // the monotonic due time passes: wall is 50 s before `when`
    expect(ran.filter((t) => t > 0)).toEqual([]);
    await fake.advance(54_999);
    expect(ran.filter((t) => t > 0)).toEqual([]);
    await fake.advance(1);
    expect(ran.filter((t) => t > 0)).toEqual([when]);
    // the every() job never repeats a fire after the jump back
    const ticks = ran.filter((t) => t < 0).map((t) => -t);
    expect(new Set(ticks).size).toBe(ticks.length);
    expect(ticks).toEqual([...ticks].sort((a, b) => a - b));
    await s.stop();
  });

  it('notices a forward jump of the wall clock within a minute (no backend time sampled yet)', async () => {
    const fake = new FakeClock();
    const lock = withoutMarkReads(new MemoryLock({ clock: fake }));
    const s = new Scheduler({ lock, clock: fake });
    const start = fake.now();
    const when = start + 10 * 60_000;
    const ran: number[] = [];
    s.add({ name: 'once', trigger: at(when), run: () => void ran.push(fake.now()) });
    s.start();
    await fake.advance(1_000);
    fake.jump(9 * 60_000); // wall is now 59 s before `when`, the monotonic timer 9 min away
    await fake.advance(61_000);
    expect(ran).toHaveLength(1);
    expect(ran[0]! - when).toBeLessThanOrEqual(2_000);
    await s.stop();
  });
});
