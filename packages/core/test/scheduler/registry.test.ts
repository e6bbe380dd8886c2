import { describe, expect, it } from 'vitest';
import { CORE_VERSION, registeredJob } from '../../src/backend.js';
import {
  cron,
  every,
  FakeClock,
  type FleetcronEvent,
  type InstanceRecord,
  isFleetcronError,
  MemoryLock,
  MemoryStore,
  Scheduler,
} from '../../src/index.js';
import { recordEvents } from './helpers.js';

const ofType = <T extends FleetcronEvent['type']>(events: FleetcronEvent[], type: T) =>
  events.filter((e): e is Extract<FleetcronEvent, { type: T }> => e.type === type);

/** A MemoryStore whose heartbeats fail while `failing`. */
class FailingHeartbeatStore extends MemoryStore {
  failing = true;
  beats = 0;
  override async heartbeat(record: InstanceRecord): Promise<void> {
    this.beats++;
    if (this.failing) throw new Error('registry down');
    await super.heartbeat(record);
  }
}

function fleetOf(ids: string[], heartbeatMs = 1_000) {
  const fake = new FakeClock();
  const lock = new MemoryLock({ clock: fake });
  const store = new MemoryStore({ clock: fake });
  const schedulers = ids.map(
    (instanceId) => new Scheduler({ lock, store, clock: fake, instanceId, heartbeatMs }),
  );
  return { fake, lock, store, schedulers };
}

describe('registry heartbeat', () => {
  it('each running scheduler is listed with its jobs; stop() leaves the registry', async () => {
    const { fake, store, schedulers } = fleetOf(['a', 'b']);
    const [a, b] = schedulers as [Scheduler, Scheduler];
    const trigger = every(60_000);
    for (const s of schedulers) {
      s.add({ name: 'job', trigger, catchUp: 'latest', run: () => {} });
      s.start();
    }
    await fake.advance(0);
    const live = await store.instances();
    expect(live.map((i) => i.instanceId)).toEqual(['a', 'b']);
    const [first] = live;
    expect(first).toMatchObject({ pid: process.pid, version: CORE_VERSION, heartbeatMs: 1_000 });
    expect(first?.jobs).toEqual([
      {
        ...registeredJob({
          name: 'job',
          trigger,
          leaseMs: 30_000,
          overlap: 'skip',
          catchUp: 'latest',
        }),
        registeredAt: fake.now(), // its first heartbeat, at start()
      },
    ]);
    const stopping = a.stop();
    await fake.advance(0);
    await stopping;
    expect((await store.instances()).map((i) => i.instanceId)).toEqual(['b']);
    await fake.advance(10_000); // b keeps beating: still live after many expiry periods
    expect((await store.instances()).map((i) => i.instanceId)).toEqual(['b']);
    const stoppingB = b.stop();
    await fake.advance(0);
    await stoppingB;
    expect(await store.instances()).toEqual([]);
  });

  it('stays registered while its runs drain, and leaves once they are done', async () => {
    const { fake, store, schedulers } = fleetOf(['a']);
    const [a] = schedulers as [Scheduler];
    a.add({ name: 'slow', trigger: every(60_000), run: (ctx) => ctx.clock.sleep(5_000) });
    a.start();
    await fake.advance(60_000);
    const stopping = a.stop({ drainMs: 20_000 });
    await fake.advance(4_000); // draining: still live (a holder-lost sweep elsewhere leaves it be)
    expect((await store.instances()).map((i) => i.instanceId)).toEqual(['a']);
    await fake.advance(1_000);
    await stopping;
    expect(await store.instances()).toEqual([]);
  });

  it('a failing heartbeat never affects fires: heartbeat.failed is published, runs go on', async () => {
    const fake = new FakeClock();
    const store = new FailingHeartbeatStore({ clock: fake });
    const rec = recordEvents();
    const s = new Scheduler({
      ...{ lock: new MemoryLock({ clock: fake }), store, clock: fake, heartbeatMs: 1_000 },
    });
    let runs = 0;
    s.add({ name: 'job', trigger: every(1_000), run: () => void runs++ });
    s.start();
    await fake.advance(3_000);
    expect(runs).toBe(3);
    expect(store.beats).toBeGreaterThanOrEqual(3);
    expect(ofType(rec.events, 'heartbeat.failed').length).toBe(store.beats);
    store.failing = false;
    await fake.advance(1_000);
    expect((await store.instances()).map((i) => i.instanceId)).toEqual([s.instanceId]);
    const stopping = s.stop();
    await fake.advance(0);
    await stopping;
    rec.stop();
  });

  it('heartbeatMs and runRequestPollMs are validated', () => {
    const lock = new MemoryLock();
    for (const field of ['heartbeatMs', 'runRequestPollMs']) {
      let thrown: unknown = null;
      try {
        new Scheduler({ lock, [field]: 0 });
      } catch (error) {
        thrown = error;
      }
      expect(isFleetcronError(thrown, 'INVALID_OPTION')).toBe(true);
      expect((thrown as { field?: string }).field).toBe(field);
    }
  });
});

describe('drift', () => {
  it('instances disagreeing on a job: fleet.drift once per change, then drift_resolved', async () => {
    const { fake, schedulers } = fleetOf(['a', 'b']);
    const [a, b] = schedulers as [Scheduler, Scheduler];
    const rec = recordEvents();
    a.add({ name: 'job', trigger: cron('0 * * * *'), run: () => {} });
    b.add({ name: 'job', trigger: cron('30 * * * *'), run: () => {} });
    a.add({ name: 'same', trigger: every(60_000), run: () => {} });
    b.add({ name: 'same', trigger: every(60_000), run: () => {} });
    a.start();
    b.start();
    await fake.advance(5_000); // five heartbeats each
    const drift = ofType(rec.events, 'fleet.drift');
    expect(drift.map((e) => [e.instanceId, e.job])).toEqual(
      expect.arrayContaining([
        ['a', 'job'],
        ['b', 'job'],
      ]),
    );
    expect(drift.filter((e) => e.instanceId === 'a')).toHaveLength(1);
    expect(drift[0]?.definitions).toHaveLength(2);
    const stoppingB = b.stop();
    await fake.advance(1_000);
    await stoppingB;
    const resolved = ofType(rec.events, 'fleet.drift_resolved');
    expect(resolved.map((e) => [e.instanceId, e.job])).toEqual([['a', 'job']]);
    const stoppingA = a.stop();
    await fake.advance(0);
    await stoppingA;
    rec.stop();
  });
});
