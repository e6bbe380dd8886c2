import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  CORE_VERSION,
  definitionHash,
  registeredJob,
  triggerFromSpec,
  triggerSpecOf,
} from '../../src/backend.js';
import {
  at,
  cron,
  every,
  FakeClock,
  FleetClient,
  type InstanceRecord,
  isFleetcronError,
  MemoryLock,
  MemoryStore,
  type RegisteredJob,
  type Store,
  type Trigger,
  UnknownJobError,
} from '../../src/index.js';

const START = Date.UTC(2026, 2, 28, 23, 0); // the night Europe/Berlin moves to summer time

function job(name: string, trigger: Trigger, leaseMs = 30_000): RegisteredJob {
  const spec = triggerSpecOf(trigger);
  return {
    name,
    trigger: trigger.describe(),
    spec,
    definitionHash: definitionHash({ trigger: trigger.describe(), spec, leaseMs, overlap: 'skip' }),
    leaseMs,
    overlap: 'skip',
    catchUp: 'skip',
  };
}

function instance(id: string, jobs: RegisteredJob[], heartbeatMs = 10_000): InstanceRecord {
  return {
    instanceId: id,
    host: 'h',
    pid: 1,
    version: '0.1.0',
    startedAt: START,
    heartbeatMs,
    clock: { offsetMs: 5, rttMs: 2 },
    jobs,
  };
}

function setup() {
  const clock = new FakeClock(START);
  const store = new MemoryStore({ clock });
  const client = new FleetClient({ store, lock: new MemoryLock(), clock });
  return { clock, store, client };
}

describe('definitionHash', () => {
  it('is equal for equal definitions and differs on trigger, lease, overlap or catch-up', () => {
    const base = { trigger: 'x', spec: cron('0 3 * * *').spec, leaseMs: 1000, overlap: 'skip' };
    const h = definitionHash(base);
    expect(h).toMatch(/^[0-9a-f]{16}$/);
    expect(definitionHash({ ...base, catchUp: 'skip' }), 'skip is the default').toBe(h);
    expect(definitionHash({ overlap: 'skip', leaseMs: 1000, spec: base.spec, trigger: 'x' })).toBe(
      h,
    );
    expect(definitionHash({ ...base, spec: cron('0 4 * * *').spec })).not.toBe(h);
    expect(definitionHash({ ...base, leaseMs: 2000 })).not.toBe(h);
    expect(definitionHash({ ...base, overlap: 'allow' })).not.toBe(h);
    expect(definitionHash({ ...base, catchUp: { max: 3 } })).not.toBe(h);
    expect(definitionHash({ ...base, catchUp: 'latest' })).not.toBe(h);
    const custom = { trigger: 'custom(a)', leaseMs: 1000, overlap: 'skip' };
    expect(definitionHash(custom)).not.toBe(definitionHash({ ...custom, trigger: 'custom(b)' }));
  });
});

describe('registeredJob and CORE_VERSION', () => {
  it('builds the heartbeat entry with the same hash as definitionHash', () => {
    const trigger = cron('0 3 * * *', { tz: 'Europe/Berlin' });
    const entry = registeredJob({ name: 'n', trigger, leaseMs: 5000, overlap: 'skip' });
    expect(entry).toEqual({
      name: 'n',
      trigger: 'cron(0 3 * * * Europe/Berlin)',
      spec: { kind: 'cron', expression: '0 3 * * *', tz: 'Europe/Berlin' },
      definitionHash: definitionHash({
        trigger: 'cron(0 3 * * * Europe/Berlin)',
        spec: trigger.spec,
        leaseMs: 5000,
        overlap: 'skip',
      }),
      leaseMs: 5000,
      overlap: 'skip',
      catchUp: 'skip',
    });
    const latest = registeredJob({
      name: 'n',
      trigger,
      leaseMs: 5000,
      overlap: 'skip',
      catchUp: 'latest',
    });
    expect(latest.definitionHash).not.toBe(entry.definitionHash);
  });

  it('CORE_VERSION is the package version', () => {
    const manifest = JSON.parse(
      readFileSync(new URL('../../package.json', import.meta.url), 'utf8'),
    ) as { version: string };
    expect(CORE_VERSION).toBe(manifest.version);
  });
});

describe('trigger specs', () => {
  it('rebuild built-in triggers that fire at the same times', () => {
    const triggers = [
      cron('30 2 * * *', { tz: 'Europe/Berlin' }),
      every(90_000, { anchor: 7 }),
      at(START + 5000),
    ];
    for (const trigger of triggers) {
      const spec = triggerSpecOf(trigger);
      expect(spec, trigger.describe()).not.toBeNull();
      const rebuilt = triggerFromSpec(JSON.parse(JSON.stringify(spec)));
      expect(rebuilt.describe()).toBe(trigger.describe());
      expect(rebuilt.next(new Date(START))).toEqual(trigger.next(new Date(START)));
    }
    expect(triggerSpecOf({ next: () => null, describe: () => 'custom' })).toBeNull();
    expect(() => triggerFromSpec({ kind: 'nope' } as never)).toThrow(/unknown kind/);
  });
});

describe('FleetClient', () => {
  it('refuses a store without fleet control, naming the field', () => {
    const legacy = {
      backend: 'old',
      record: async () => {},
      history: async () => ({ executions: [], nextCursor: null }),
      prune: async () => 0,
      getJobState: async () => ({
        job: 'x',
        paused: false,
        lastStatus: null,
        lastFireAt: null,
        lastFinishedAt: null,
      }),
      setPaused: async () => {},
    } as Store;
    let error: unknown;
    try {
      new FleetClient({ store: legacy });
    } catch (e) {
      error = e;
    }
    expect(isFleetcronError(error, 'INVALID_OPTION')).toBe(true);
    expect((error as Error).message).toMatch(/store.*fleet control/);
  });

  it('fleet(): instances, jobs with next 5 fires in UTC and the job zone, paused, last outcome', async () => {
    const { clock, store, client } = setup();
    const nightly = job('nightly', cron('30 2 * * *', { tz: 'Europe/Berlin' }));
    await store.heartbeat(instance('b', [nightly]));
    await store.heartbeat(
      instance('a', [nightly, job('custom', { next: () => null, describe: () => 'custom()' })]),
    );
    await client.pause('old-job', { by: 'alice' });
    await store.record({
      id: 'e1',
      job: 'nightly',
      fireAt: START - 1000,
      status: 'failed',
      attempt: 1,
      instanceId: 'a',
      token: 1,
      startedAt: START - 999,
      finishedAt: START - 500,
      error: 'x',
    });
    await clock.advance(1000);
    const view = await client.fleet();
    expect(view.at).toBe(START + 1000);
    expect(view.backends).toEqual({ store: 'memory', lock: 'memory' });
    expect(view.instances.map((i) => [i.instanceId, i.clock, i.lastSeenAt])).toEqual([
      ['a', { offsetMs: 5, rttMs: 2 }, START],
      ['b', { offsetMs: 5, rttMs: 2 }, START],
    ]);
    expect(
      view.jobs.map((j) => j.name),
      'defined jobs and jobs only the store knows',
    ).toEqual(['custom', 'nightly', 'old-job']);
    const [custom, n, old] = view.jobs;
    expect(custom).toMatchObject({
      trigger: 'custom()',
      spec: null,
      nextFires: [],
      definedBy: ['a'],
    });
    expect(n!.definedBy).toEqual(['a', 'b']);
    expect(n!.drift).toBe(false);
    expect(n).toMatchObject({ lastStatus: 'failed', lastFireAt: START - 1000, paused: false });
    expect(n!.nextFires.map((f) => f.local)).toEqual([
      // 29 March 02:30 does not exist in Berlin: the fire moves to the end of the gap
      '2026-03-29 03:00:00 +02:00',
      '2026-03-30 02:30:00 +02:00',
      '2026-03-31 02:30:00 +02:00',
      '2026-04-01 02:30:00 +02:00',
      '2026-04-02 02:30:00 +02:00',
    ]);
    expect(n!.nextFires[0]).toMatchObject({
      utc: '2026-03-29T01:00:00.000Z',
      zone: 'Europe/Berlin',
    });
    expect(old).toMatchObject({
      trigger: null,
      definedBy: [],
      paused: true,
      pausedBy: 'alice',
      pausedAt: START,
    });
    expect(view.drift).toEqual([]);
  });

  it('flags drift: which instances have which hash, majority first, and which one is in force for which fires', async () => {
    const { store, client } = setup();
    // i1 and i3 registered every 5 min a minute ago; i2 (a new release) every 10 min just now:
    // the new one comes into force two heartbeats (20 s) after it registered (rolling deploy)
    const five = { ...job('report', every(300_000)), registeredAt: START - 60_000 };
    const ten = { ...job('report', every(600_000)), registeredAt: START };
    await store.heartbeat(instance('i1', [five]));
    await store.heartbeat(instance('i2', [ten]));
    await store.heartbeat(instance('i3', [five]));
    const view = await client.fleet();
    expect(view.drift).toEqual(['report']);
    const [report] = view.jobs;
    expect(report!.drift).toBe(true);
    // registration times on the backend's clock: less each instance's 5 ms offset
    const switchAt = START - 5 + 20_000;
    expect(report!.definitions).toEqual([
      {
        ...{ hash: five.definitionHash, instances: ['i1', 'i3'], trigger: 'every(300000ms)' },
        inForce: { from: null, until: switchAt },
      },
      {
        ...{ hash: ten.definitionHash, instances: ['i2'], trigger: 'every(600000ms)' },
        inForce: { from: switchAt, until: null },
      },
    ]);
    expect(report!.trigger, 'the definition in force now is shown').toBe('every(300000ms)');
    const fires = report!.nextFires.map((f) => f.at);
    expect(fires.length).toBeGreaterThan(0);
    for (const at of fires) {
      // every 5 min until the switch, every 10 min from it on
      expect(at % (at < switchAt ? 300_000 : 600_000), `next fire ${at}`).toBe(0);
    }
    await store.leave('i1');
    await store.leave('i3');
    expect((await client.fleet()).drift, 'drift ends when the fleet agrees').toEqual([]);
  });

  it('an instance unseen for 3 heartbeats leaves the view (FakeClock)', async () => {
    const { clock, store, client } = setup();
    await store.heartbeat(instance('i1', [job('a', every(1000))], 1000));
    await clock.advance(3000);
    expect((await client.fleet()).instances).toHaveLength(1);
    await clock.advance(1);
    const view = await client.fleet();
    expect(view.instances).toEqual([]);
    expect(view.jobs, 'a job nobody defines and the store does not know is gone').toEqual([]);
  });

  it('pause/resume and requestRun say who asked; history filters by status', async () => {
    const { store, client } = setup();
    await store.heartbeat(instance('i1', [job('a', every(1000))]));
    await client.pause('a', { by: 'bob' });
    expect(await store.getJobState('a')).toMatchObject({
      paused: true,
      pausedBy: 'bob',
      pausedAt: START,
    });
    await client.resume('a', { by: 'bob' });
    expect(await store.getJobState('a')).toMatchObject({ paused: false, pausedBy: null });
    const request = await client.requestRun('a', { by: 'cli' });
    expect(request).toMatchObject({ job: 'a', requestedBy: 'cli', requestedAt: START });
    expect(await store.takeRunRequests(['a'], 'i1')).toMatchObject([request]);

    const unknown = await client.requestRun('nobody-defines', { by: 'cli' }).catch((e) => e);
    expect(isFleetcronError(unknown, 'UNKNOWN_JOB')).toBe(true);
    expect(unknown).toBeInstanceOf(UnknownJobError);
    expect(unknown).toMatchObject({ job: 'nobody-defines', field: 'job' });
    const noActor = await client.pause('a', { by: '' }).catch((e) => e);
    expect(isFleetcronError(noActor, 'INVALID_OPTION') && noActor.field).toBe('by');
    // `by` is stored and shown to other operators: bounded, no terminal or bidi controls
    for (const by of ['x'.repeat(201), 'ops\u001b]0;pwned\u0007', 'ops\u202Etoor', 'a\nb']) {
      for (const act of [
        () => client.pause('a', { by }),
        () => client.resume('a', { by }),
        () => client.requestRun('a', { by }),
      ]) {
        const refused = await act().catch((e) => e);
        expect(isFleetcronError(refused, 'INVALID_OPTION') && refused.field).toBe('by');
      }
    }
    expect((await store.getJobState('a')).paused).toBe(false);
    await client.pause('a', { by: 'x'.repeat(200) });
    await client.resume('a', { by: 'bob' });

    for (const [i, status] of (['succeeded', 'failed', 'succeeded'] as const).entries()) {
      await store.record({
        id: `e${i}`,
        job: 'a',
        fireAt: START + i,
        status,
        attempt: 1,
        instanceId: 'i1',
        token: i,
        startedAt: START + i,
        finishedAt: START + i,
        error: null,
        requestedBy: i === 1 ? 'cli' : null,
      });
    }
    const failed = await client.history('a', { status: 'failed' });
    expect(failed.executions.map((e) => [e.id, e.requestedBy])).toEqual([['e1', 'cli']]);
    expect((await client.history('a')).executions.map((e) => e.id)).toEqual(['e2', 'e1', 'e0']);
    const badStatus = await client.history('a', { status: 'weird' as never }).catch((e) => e);
    expect(isFleetcronError(badStatus, 'INVALID_OPTION') && badStatus.field).toBe('status');
  });
});
