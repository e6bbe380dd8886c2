import { describe, expect, it } from 'vitest';
import { definitionHash, registeredJob } from '../../src/backend.js';
import {
  type Calendar,
  cron,
  exclusions,
  FakeClock,
  FleetClient,
  type InstanceRecord,
  MemoryStore,
  type RegisteredJob,
} from '../../src/index.js';

const START = Date.UTC(2026, 11, 21, 12, 0); // Monday 2026-12-21, noon UTC
const holidays = (): Calendar =>
  exclusions({
    dates: [
      { date: '2026-12-24', reason: 'holiday: Christmas Eve' },
      { date: '2026-12-25', reason: 'holiday: Christmas Day' },
    ],
  });

function nightly(exclude?: Calendar | null): RegisteredJob {
  return registeredJob({
    name: 'nightly',
    trigger: cron('0 3 * * *', { tz: 'Europe/Berlin' }),
    leaseMs: 30_000,
    overlap: 'skip',
    exclude,
  });
}

function instance(id: string, jobs: RegisteredJob[]): InstanceRecord {
  return {
    instanceId: id,
    ...{ host: 'h', pid: 1, version: '0.1.0', startedAt: START, heartbeatMs: 10_000, clock: null },
    jobs,
  };
}

describe('exclusions in the fleet registry', () => {
  it("publishes the calendar's description and spec; a job without one is published as before", () => {
    const plain = nightly();
    expect('exclude' in plain).toBe(false);
    expect(plain.definitionHash).toBe(
      definitionHash({
        trigger: plain.trigger,
        spec: plain.spec,
        leaseMs: 30_000,
        overlap: 'skip',
      }),
    );
    const excluded = nightly(holidays());
    expect(excluded.exclude).toEqual({
      description: 'exclusions(2 dates)',
      spec: {
        kind: 'exclusions',
        dates: [
          { date: '2026-12-24', reason: 'holiday: Christmas Eve' },
          { date: '2026-12-25', reason: 'holiday: Christmas Day' },
        ],
      },
    });
    expect(JSON.parse(JSON.stringify(excluded))).toEqual(excluded); // plain JSON for every store
  });

  it('different exclusions are a differing definition; equal ones hash equal', () => {
    const none = nightly().definitionHash;
    const a = nightly(holidays()).definitionHash;
    expect(a).not.toBe(none);
    expect(nightly(holidays()).definitionHash).toBe(a);
    const other = nightly(exclusions({ dates: ['2026-12-24'] })).definitionHash;
    expect(other).not.toBe(a);
    const custom = (name: string): Calendar => ({ excludedBy: () => null, describe: () => name });
    const c1 = nightly(custom('weekends()')).definitionHash;
    expect(c1).not.toBe(none);
    expect(nightly(custom('weekends()')).definitionHash).toBe(c1);
    expect(nightly(custom('holidays()')).definitionHash).not.toBe(c1);
    expect(nightly(custom('weekends()')).exclude).toEqual({
      description: 'weekends()',
      spec: null,
    });
  });

  it('the fleet view lists excluded fires with their reason, not dropping them', async () => {
    const clock = new FakeClock(START);
    const store = new MemoryStore({ clock });
    const client = new FleetClient({ store, clock });
    await store.heartbeat(instance('a', [nightly(holidays())]));
    const [job] = (await client.fleet()).jobs;
    expect(job?.exclude?.description).toBe('exclusions(2 dates)');
    expect(job?.nextFires.map((f) => [f.local, f.excluded ?? null])).toEqual([
      ['2026-12-22 03:00:00 +01:00', null],
      ['2026-12-23 03:00:00 +01:00', null],
      ['2026-12-24 03:00:00 +01:00', 'holiday: Christmas Eve'],
      ['2026-12-25 03:00:00 +01:00', 'holiday: Christmas Day'],
      ['2026-12-26 03:00:00 +01:00', null],
    ]);
    expect('excluded' in (job?.nextFires[0] ?? {})).toBe(false);
  });

  it('reads the calendar in the job zone: a fire at 23:30 UTC on the 23rd is the 24th in Berlin', async () => {
    const clock = new FakeClock(START);
    const store = new MemoryStore({ clock });
    const client = new FleetClient({ store, clock, nextFireCount: 3 });
    const late = registeredJob({
      name: 'late',
      trigger: cron('30 0 * * *', { tz: 'Europe/Berlin' }),
      leaseMs: 30_000,
      overlap: 'skip',
      exclude: holidays(),
    });
    await store.heartbeat(instance('a', [late]));
    const [job] = (await client.fleet()).jobs;
    expect(job?.nextFires.map((f) => [f.utc, f.excluded ?? null])).toEqual([
      ['2026-12-21T23:30:00.000Z', null],
      ['2026-12-22T23:30:00.000Z', null],
      ['2026-12-23T23:30:00.000Z', 'holiday: Christmas Eve'],
    ]);
  });

  it('a custom calendar or an unreadable spec marks nothing and does not break the view', async () => {
    const clock = new FakeClock(START);
    const store = new MemoryStore({ clock });
    const client = new FleetClient({ store, clock, nextFireCount: 4 });
    const custom = nightly({ excludedBy: () => 'always', describe: () => 'custom()' });
    const future = {
      ...nightly(holidays()),
      name: 'future',
      exclude: { description: 'holidays(DE)', spec: { kind: 'holidays' } },
    } as unknown as RegisteredJob;
    await store.heartbeat(instance('a', [custom, future]));
    const jobs = (await client.fleet()).jobs;
    for (const job of jobs) {
      expect(job.nextFires).toHaveLength(4);
      expect(job.nextFires.some((f) => f.excluded !== undefined)).toBe(false);
    }
    expect(jobs.map((j) => j.exclude?.description)).toEqual(['holidays(DE)', 'custom()']);
  });
  it("a job's startAt and endAt are published and bound the view's next fires", async () => {
    const clock = new FakeClock(START);
    const store = new MemoryStore({ clock });
    const client = new FleetClient({ store, clock, nextFireCount: 5 });
    const startAt = Date.UTC(2026, 11, 23, 12, 0); // fires from the 24th
    const endAt = Date.UTC(2026, 11, 26, 2, 0); // 03:00 Berlin on the 26th is 02:00 UTC: included
    const bounded = registeredJob({
      ...{ name: 'bounded', trigger: cron('0 3 * * *', { tz: 'Europe/Berlin' }) },
      ...{ leaseMs: 30_000, overlap: 'skip', window: { startAt, endAt } },
    });
    expect([bounded.startAt, bounded.endAt]).toEqual([startAt, endAt]);
    expect('startAt' in nightly()).toBe(false); // a job without bounds is published as before
    await store.heartbeat(instance('a', [bounded]));
    const [job] = (await client.fleet()).jobs;
    expect(job?.nextFires.map((f) => f.local)).toEqual([
      '2026-12-24 03:00:00 +01:00',
      '2026-12-25 03:00:00 +01:00',
      '2026-12-26 03:00:00 +01:00',
    ]);
  });
});
