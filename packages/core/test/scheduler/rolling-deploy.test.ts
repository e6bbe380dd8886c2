import { describe, expect, it } from 'vitest';
import { type DefinitionInForce, definitionsInForce } from '../../src/backend.js';
import {
  every,
  FakeClock,
  type FleetcronEvent,
  type LiveInstance,
  MemoryLock,
  MemoryStore,
  Scheduler,
} from '../../src/index.js';
import { recordEvents } from './helpers.js';

const HEARTBEAT_MS = 1_000;

/** A live instance defining `job` with `hash`, registered at `at` (instance clock). */
function instance(
  id: string,
  hash: string,
  at: number,
  offsetMs = 0,
  job = 'report',
): LiveInstance {
  return {
    ...{
      instanceId: id,
      host: 'h',
      pid: 1,
      version: '0',
      startedAt: at,
      heartbeatMs: HEARTBEAT_MS,
    },
    clock: offsetMs === 0 ? null : { offsetMs, rttMs: 1 },
    lastSeenAt: at,
    jobs: [
      {
        ...{ name: job, trigger: 't', spec: null, definitionHash: hash, leaseMs: 1_000 },
        ...{ overlap: 'skip', catchUp: 'skip', registeredAt: at },
      },
    ],
  };
}

describe('definitionsInForce: one definition per fire during a rolling deploy', () => {
  it('the newest definition comes into force two heartbeats after it was first registered', () => {
    const [old, next] = definitionsInForce([
      instance('a', 'v1', 0),
      instance('b', 'v1', 500),
      instance('c', 'v2', 10_000),
    ]).get('report') as [DefinitionInForce, DefinitionInForce];
    expect(old).toMatchObject({ hash: 'v1', since: 0, instances: ['a', 'b'] });
    expect(old.from).toBe(Number.NEGATIVE_INFINITY);
    expect(old.until).toBe(12_000);
    expect(next).toMatchObject({ hash: 'v2', since: 10_000, from: 12_000, instances: ['c'] });
    expect(next.until).toBe(Number.POSITIVE_INFINITY);
  });

  it('a definition whose instances all left drops out: the one left is in force for every fire', () => {
    const [only, ...rest] = definitionsInForce([instance('c', 'v2', 10_000)]).get('report') ?? [];
    expect(rest).toEqual([]);
    expect(only?.from).toBe(Number.NEGATIVE_INFINITY);
    expect(only?.until).toBe(Number.POSITIVE_INFINITY);
  });

  it('registration times are compared on the backend clock: a clock running ahead does not jump the order', () => {
    // c registered v2 at 10,000 on the backend's clock, its own clock 30 s ahead (offset
    // instance − backend = 30,000): its registeredAt reads 40,000. d registered v3 at 20,000.
    const groups = definitionsInForce([
      instance('a', 'v1', 0),
      instance('c', 'v2', 40_000, 30_000),
      instance('d', 'v3', 20_000),
    ]).get('report');
    expect(groups?.map((g) => [g.hash, g.since, g.from])).toEqual([
      ['v1', 0, Number.NEGATIVE_INFINITY],
      ['v2', 10_000, 12_000],
      ['v3', 20_000, 22_000],
    ]);
  });
});

describe('a rolling deploy on one registry (fake clock)', () => {
  it('fires follow one definition fleet-wide: the old one until two heartbeats after the new one registered, then the new one; never both', async () => {
    const fake = new FakeClock();
    const lock = new MemoryLock({ clock: fake });
    const store = new MemoryStore({ clock: fake });
    const start = fake.now();
    const runs: { fireAt: number; instance: string; version: string }[] = [];
    const make = (instanceId: string, version: 'v1' | 'v2') => {
      const s = new Scheduler({ lock, store, clock: fake, instanceId, heartbeatMs: HEARTBEAT_MS });
      // v1 fires on whole seconds, v2 half a second later: a fire tells its definition
      const anchor = version === 'v1' ? start : start + 500;
      s.add({
        name: 'report',
        trigger: every(1_000, { anchor }),
        run: (ctx) => {
          runs.push({ fireAt: ctx.fireAt.getTime(), instance: instanceId, version });
        },
      });
      return s;
    };
    const rec = recordEvents();
    const a = make('a', 'v1');
    const b = make('b', 'v1');
    a.start();
    b.start();
    await fake.advance(10_000);
    const deployedAt = fake.now();
    const c = make('c', 'v2'); // the new release, one instance at a time
    c.start();
    await fake.advance(10_000);
    const leaving = Promise.all([a.stop(), b.stop()]); // the old release's instances leave
    await fake.advance(100);
    await leaving;
    await fake.advance(5_000);
    const stopping = c.stop();
    await fake.advance(100);
    await stopping;
    rec.stop();

    const switchAt = deployedAt + 2 * HEARTBEAT_MS;
    const byFire = new Map<number, typeof runs>();
    for (const run of runs) byFire.set(run.fireAt, [...(byFire.get(run.fireAt) ?? []), run]);
    expect(
      [...byFire.values()].filter((r) => r.length > 1),
      'fires run twice',
    ).toEqual([]);
    const before = runs.filter((r) => r.fireAt < switchAt);
    const after = runs.filter((r) => r.fireAt >= switchAt);
    expect(
      before.filter((r) => r.version !== 'v1'),
      'v2 fires before the switch',
    ).toEqual([]);
    expect(
      after.filter((r) => r.version !== 'v2'),
      'v1 fires after the switch',
    ).toEqual([]);
    // every fire of the definition in force ran: v1's up to the switch, v2's from it on
    const expected = (from: number, until: number) => {
      const fires: number[] = [];
      for (let t = from; t < until; t += 1_000) fires.push(t);
      return fires;
    };
    expect(before.map((r) => r.fireAt)).toEqual(expected(start + 1_000, switchAt));
    expect(after.map((r) => r.fireAt)).toEqual(expected(switchAt + 500, deployedAt + 15_100));
    // each instance said why it did not claim
    const superseded = rec.events.filter(
      (e): e is Extract<FleetcronEvent, { type: 'fire.superseded' }> =>
        e.type === 'fire.superseded',
    );
    const oldSide = superseded.filter((e) => e.instanceId !== 'c');
    expect(oldSide.length).toBeGreaterThan(0);
    expect(oldSide.every((e) => e.fireAt >= switchAt)).toBe(true);
    const newSide = superseded.filter((e) => e.instanceId === 'c');
    expect(newSide.length).toBeGreaterThan(0);
    expect(newSide.every((e) => e.fireAt < switchAt)).toBe(true);
  });
});
