import { describe, expect, it } from 'vitest';
import {
  type AlertEvent,
  callbackNotifier,
  type Execution,
  every,
  FakeClock,
  FleetClient,
  fleetWatchdog,
  isFleetcronError,
  MemoryLock,
  MemoryStore,
  Scheduler,
  ScheduleServer,
  WatchdogDeliveryError,
} from '../../src/index.js';
import { allHistory, recordEvents, stopOnFakeClock } from '../scheduler/helpers.js';

const WATCHDOG = 'fleetcron.watchdog';

/**
 * A finished execution of `job` written by hand (as instance `a`): `fireAt` and `status` as
 * given, started 10 ms before `finishedAt` unless `startedAt` says otherwise.
 */
function executionRow(
  job: string,
  fields: Pick<Execution, 'fireAt' | 'status' | 'finishedAt'> & Partial<Execution>,
): Execution {
  const finishedAt = fields.finishedAt ?? 0;
  return {
    id: `${job}-${fields.fireAt}`,
    job,
    attempt: fields.status === 'skipped' ? 0 : 1,
    instanceId: 'a',
    token: fields.status === 'skipped' ? null : 1,
    startedAt: finishedAt - 10,
    error: null,
    reason: null,
    ...fields,
  };
}

/** Three instances on one lock and store, each with the same jobs and the watchdog. */
function fleetWith(
  fake: FakeClock,
  store: MemoryStore,
  jobs: (scheduler: Scheduler) => void,
  watchdog: Parameters<typeof fleetWatchdog>[0],
): Scheduler[] {
  const lock = new MemoryLock({ clock: fake });
  return ['a', 'b', 'c'].map((instanceId) => {
    const scheduler = new Scheduler({ lock, store, clock: fake, instanceId, heartbeatMs: 5_000 });
    jobs(scheduler);
    scheduler.add(fleetWatchdog(watchdog));
    return scheduler;
  });
}

describe('fleetWatchdog', () => {
  it('a fleet of three notifies each failed run once, and opens then resolves an overdue job once', async () => {
    const fake = new FakeClock();
    const store = new MemoryStore({ clock: fake });
    const received: AlertEvent[] = [];
    let exportHealthy = true;
    const fleet = fleetWith(
      fake,
      store,
      (s) => {
        s.add({
          name: 'billing',
          trigger: every(20_000),
          run: () => {
            throw new Error('card declined\n    at charge (billing.ts:1)');
          },
        });
        s.add({
          name: 'export',
          trigger: every(10_000),
          run: () => {
            if (!exportHealthy) throw new Error('disk full');
          },
        });
      },
      {
        store,
        notifiers: [callbackNotifier((event) => void received.push(event))],
        every: 15_000,
        settleMs: 1_000,
        overdue: { export: 25_000 },
      },
    );
    for (const s of fleet) s.start();
    await fake.advance(60_000);
    exportHealthy = false; // export fails from here: overdue 25 s after its first failed fire
    await fake.advance(60_000);
    exportHealthy = true; // and succeeds again: resolved
    await fake.advance(45_500);
    for (const s of fleet) await stopOnFakeClock(s, fake);

    const watchdogRuns = await allHistory(store, WATCHDOG);
    const judgedTo = Math.max(...watchdogRuns.map((r) => r.fireAt)) - 1_000; // settleMs
    expect(watchdogRuns.every((r) => r.status === 'succeeded')).toBe(true);
    expect(new Set(watchdogRuns.map((r) => r.fireAt)).size, 'one run per fire').toBe(
      watchdogRuns.length,
    );

    // every failed run of billing and export that ended by the last watchdog fire: one alert
    const failed = [
      ...(await allHistory(store, 'billing')),
      ...(await allHistory(store, 'export')),
    ].filter((r) => r.status === 'failed' && (r.finishedAt ?? 0) <= judgedTo);
    expect(failed.length).toBeGreaterThan(4);
    const runFailed = received.filter((e) => e.alert.kind === 'run_failed');
    expect(runFailed.map((e) => `${e.alert.job}@${e.alert.fireAt}`).sort()).toEqual(
      failed.map((r) => `${r.job}@${r.fireAt}`).sort(),
    );
    expect(new Set(runFailed.map((e) => e.alert.id)).size, 'no alert twice').toBe(runFailed.length);
    const billing = runFailed.find((e) => e.alert.job === 'billing');
    expect(billing?.alert.details).toMatchObject({
      status: 'failed',
      error: 'Error: card declined',
    });
    expect(billing?.alert.severity).toBe('critical');

    // the dead-man's switch: opened once, resolved once, the same alert
    const overdue = received.filter((e) => e.alert.kind === 'job_overdue');
    expect(overdue.map((e) => e.action)).toEqual(['opened', 'resolved']);
    const [opened, resolved] = overdue as [AlertEvent, AlertEvent];
    expect(resolved.alert.id).toBe(opened.alert.id);
    expect(resolved.alert.state).toBe('resolved');
    const exportRows = await allHistory(store, 'export');
    const firstFailed = Math.min(
      ...exportRows.filter((r) => r.status === 'failed').map((r) => r.fireAt),
    );
    expect(opened.alert.fireAt, 'the expected fire is the first one that failed').toBe(firstFailed);
    expect(opened.alert.openedAt).toBe(firstFailed + 25_000);
    const recovered = Math.min(
      ...exportRows
        .filter((r) => r.status === 'succeeded' && r.fireAt > firstFailed)
        .map((r) => r.finishedAt ?? 0),
    );
    expect(resolved.alert.resolvedAt).toBe(recovered);
    expect(received.filter((e) => e.alert.job === WATCHDOG)).toEqual([]);
  });

  it('a stored schedule with options.overdueAfterMs is watched like a job in overdue', async () => {
    const fake = new FakeClock();
    const store = new MemoryStore({ clock: fake });
    const received: AlertEvent[] = [];
    let healthy = true;
    const fleet = fleetWith(fake, store, () => {}, {
      store,
      notifiers: [callbackNotifier((event) => void received.push(event))],
      every: 15_000,
      settleMs: 1_000,
    });
    const sync = () => {
      if (!healthy) throw new Error('upstream 503');
    };
    const servers = fleet.map(
      (scheduler) => new ScheduleServer({ scheduler, store, clock: fake, handlers: { sync } }),
    );
    const client = new FleetClient({ store, clock: fake });
    const trigger = { kind: 'every', ms: 10_000 } as const;
    await client.createSchedule(
      { id: 'nightly', handler: 'sync', trigger, options: { overdueAfterMs: 25_000 } },
      { by: 'alice' },
    );
    await client.createSchedule({ id: 'hourly', handler: 'sync', trigger }, { by: 'alice' });
    for (const server of servers) await server.start();
    for (const s of fleet) s.start();
    await fake.advance(60_000);
    healthy = false; // both schedules fail from here; only `nightly` has a deadline
    await fake.advance(60_000);
    healthy = true;
    await fake.advance(45_500);
    for (const server of servers) await server.stop();
    for (const s of fleet) await stopOnFakeClock(s, fake);

    const overdue = received.filter((e) => e.alert.kind === 'job_overdue');
    expect(overdue.map((e) => [e.action, e.alert.job])).toEqual([
      ['opened', 'schedule:nightly'],
      ['resolved', 'schedule:nightly'],
    ]);
    const rows = await allHistory(store, 'schedule:nightly');
    const firstFailed = Math.min(...rows.filter((r) => r.status === 'failed').map((r) => r.fireAt));
    expect(overdue[0]?.alert.openedAt).toBe(firstFailed + 25_000);
    expect(
      received.some((e) => e.alert.job === 'schedule:hourly' && e.alert.kind === 'run_failed'),
    ).toBe(true);
  });

  it('fires recorded missed or backend_unavailable: one fires_missed alert per job and span', async () => {
    const fake = new FakeClock();
    const store = new MemoryStore({ clock: fake });
    const received: AlertEvent[] = [];
    const fleet = fleetWith(
      fake,
      store,
      (s) => s.add({ name: 'report', trigger: every(3_600_000), run: () => {} }),
      {
        store,
        notifiers: [callbackNotifier((event) => void received.push(event))],
        every: 10_000,
        settleMs: 1_000,
      },
    );
    for (const s of fleet) s.start();
    await fake.advance(12_000);
    const now = fake.now();
    for (const [fireAt, reason] of [
      [now - 7_200_000, 'missed'],
      [now - 3_600_000, 'missed'],
      [now - 1_000, 'backend_unavailable'],
      [now - 500, 'overlap'], // a run still going: not a missed fire
    ] as const) {
      await store.record(
        executionRow('report', {
          fireAt,
          status: 'skipped',
          startedAt: now,
          finishedAt: now,
          reason,
        }),
      );
    }
    await fake.advance(20_000);
    for (const s of fleet) await stopOnFakeClock(s, fake);
    const missed = received.filter((e) => e.alert.kind === 'fires_missed');
    expect(missed).toHaveLength(1);
    expect(missed[0]?.alert.fireAt).toBe(now - 7_200_000);
    expect(missed[0]?.alert.details).toEqual({
      fires: [now - 7_200_000, now - 3_600_000, now - 1_000],
      reasons: ['missed', 'backend_unavailable'],
    });
  });

  it('a failure whose row was written before an older one of the same job is still notified', async () => {
    const fake = new FakeClock();
    const store = new MemoryStore({ clock: fake });
    const received: AlertEvent[] = [];
    const fleet = fleetWith(
      fake,
      store,
      (s) => s.add({ name: 'ledger', trigger: every(3_600_000), run: () => {} }),
      {
        store,
        notifiers: [callbackNotifier((event) => void received.push(event))],
        every: 10_000,
        settleMs: 1_000,
      },
    );
    for (const s of fleet) s.start();
    await fake.advance(12_000);
    const now = fake.now();
    const row = (fireAt: number, finishedAt: number, status: 'succeeded' | 'failed') =>
      store.record(executionRow('ledger', { fireAt, status, finishedAt }));
    // the failure (inside the next span) is written first, an older success last: the job's
    // last written finish (listJobs) is then before the span
    await row(now - 200, now - 100, 'failed');
    await row(now - 40_000, now - 30_000, 'succeeded');
    expect((await store.listJobs()).find((j) => j.job === 'ledger')?.lastFinishedAt).toBe(
      now - 30_000,
    );
    await fake.advance(20_000);
    for (const s of fleet) await stopOnFakeClock(s, fake);
    const failed = received.filter((e) => e.alert.kind === 'run_failed');
    expect(failed.map((e) => e.alert.fireAt)).toEqual([now - 200]);
  });

  it('a kind is not crowded out of the page it shares with the other: each is read again when cut short', async () => {
    const fake = new FakeClock();
    const store = new MemoryStore({ clock: fake });
    const received: AlertEvent[] = [];
    const fleet = fleetWith(
      fake,
      store,
      (s) => {
        for (const name of ['crowded', 'flaky']) {
          s.add({ name, trigger: every(3_600_000), run: () => {} });
        }
      },
      {
        store,
        notifiers: [callbackNotifier((event) => void received.push(event))],
        every: 10_000,
        settleMs: 1_000,
      },
    );
    for (const s of fleet) s.start();
    await fake.advance(12_000);
    const now = fake.now();
    // inside the next span: one failure of `crowded`, then 120 newer overlap skips; one missed
    // fire of `flaky`, then 120 newer failures. The newest 100 rows of each hide the older kind.
    await store.record(
      executionRow('crowded', { fireAt: now - 2_600, status: 'failed', finishedAt: now - 2_550 }),
    );
    await store.record(
      executionRow('flaky', {
        fireAt: now - 2_600,
        status: 'skipped',
        startedAt: now - 2_550,
        finishedAt: now - 2_550,
        reason: 'missed',
      }),
    );
    for (let i = 0; i < 120; i++) {
      const at = now - 2_400 + i * 20;
      await store.record(
        executionRow('crowded', {
          fireAt: at,
          status: 'skipped',
          startedAt: at,
          finishedAt: at,
          reason: 'overlap',
        }),
      );
      await store.record(
        executionRow('flaky', { fireAt: at, status: 'failed', finishedAt: at + 5 }),
      );
    }
    await fake.advance(20_000);
    for (const s of fleet) await stopOnFakeClock(s, fake);
    const failedOf = (job: string) =>
      received.filter((e) => e.alert.kind === 'run_failed' && e.alert.job === job);
    expect(failedOf('crowded').map((e) => e.alert.fireAt)).toEqual([now - 2_600]);
    expect(failedOf('flaky')).toHaveLength(100); // at most one page of failures per job and span
    const missed = received.filter((e) => e.alert.kind === 'fires_missed');
    expect(missed.map((e) => [e.alert.job, e.alert.fireAt])).toEqual([['flaky', now - 2_600]]);
  });

  it('lateAfterMs: a run that started later than the threshold after its fire is notified once', async () => {
    const fake = new FakeClock();
    const store = new MemoryStore({ clock: fake });
    const received: AlertEvent[] = [];
    const fleet = fleetWith(
      fake,
      store,
      (s) => s.add({ name: 'digest', trigger: every(3_600_000), run: () => {} }),
      {
        store,
        notifiers: [callbackNotifier((event) => void received.push(event))],
        every: 10_000,
        settleMs: 1_000,
        lateAfterMs: 2_000,
      },
    );
    for (const s of fleet) s.start();
    await fake.advance(12_000);
    const now = fake.now();
    const ran = (fireAt: number, lateMs: number, status: 'succeeded' | 'failed') =>
      store.record(
        executionRow('digest', { fireAt, status, startedAt: fireAt + lateMs, finishedAt: now }),
      );
    await ran(now - 60_000, 5_000, 'succeeded'); // late
    await ran(now - 50_000, 1_500, 'succeeded'); // within the threshold
    await ran(now - 40_000, 3_000, 'failed'); // late and failed: both alerts
    await fake.advance(30_000);
    for (const s of fleet) await stopOnFakeClock(s, fake);
    const late = received.filter((e) => e.alert.kind === 'run_late');
    expect(late.map((e) => e.alert.fireAt)).toEqual([now - 60_000, now - 40_000]);
    expect(late.map((e) => e.alert.details.lateMs)).toEqual([5_000, 3_000]);
    expect(received.filter((e) => e.alert.kind === 'run_failed')).toHaveLength(1);
  });

  it('an alert that cannot be delivered fails the run; the next run sends it again, same id', async () => {
    const fake = new FakeClock();
    const store = new MemoryStore({ clock: fake });
    const attempts: AlertEvent[] = [];
    let receiverUp = false;
    const fleet = fleetWith(
      fake,
      store,
      (s) =>
        s.add({
          name: 'sync',
          trigger: every(60_000),
          run: () => {
            throw new Error('upstream 503');
          },
        }),
      {
        store,
        notifiers: [
          callbackNotifier((event) => {
            attempts.push(event);
            if (!receiverUp) throw new Error('receiver down');
          }),
        ],
        delivery: { attempts: 2, backoff: { initialMs: 100, maxMs: 100 }, jitter: 'none' },
        every: 10_000,
        settleMs: 1_000,
      },
    );
    const recorded = recordEvents();
    try {
      for (const s of fleet) s.start();
      // sync's first fire (60 s) fails; the watchdog runs at 70 s and 80 s cannot send it
      await fake.advance(85_000);
      receiverUp = true;
      await fake.advance(10_000);
      for (const s of fleet) await stopOnFakeClock(s, fake);
    } finally {
      recorded.stop();
    }

    const runs = (await allHistory(store, WATCHDOG)).sort((x, y) => x.fireAt - y.fireAt);
    const firstFailure = runs.findIndex((r) => r.status === 'failed');
    expect(runs.map((r) => r.status).slice(firstFailure)).toEqual([
      'failed',
      'failed',
      'succeeded',
    ]);
    expect(runs.slice(0, firstFailure).every((r) => r.status === 'succeeded')).toBe(true);
    const ids = new Set(attempts.map((e) => e.alert.id));
    expect(ids.size, 'every attempt carries the same alert').toBe(1);
    expect(attempts.length).toBe(5); // 2 attempts in each failed run, then 1 delivered

    // the failed runs end with a typed error of the FleetcronError family, the delivery's cause
    const errors = recorded.events.flatMap((e) =>
      e.type === 'run.finished' && e.job === WATCHDOG && e.status === 'failed' ? [e.error] : [],
    );
    expect(errors).toHaveLength(2);
    for (const error of errors) {
      expect(error).toBeInstanceOf(WatchdogDeliveryError);
      expect(isFleetcronError(error, 'WATCHDOG_UNDELIVERED')).toBe(true);
      expect(error).toMatchObject({ undelivered: 1, cause: { message: 'receiver down' } });
      expect(error?.message).toContain('1 alert delivery failed (receiver down)');
    }
    const failedRow = runs[firstFailure];
    expect(failedRow?.error).toContain('WatchdogDeliveryError');
  });

  it('refuses bad options with a typed error naming the field', () => {
    const store = new MemoryStore();
    const notifiers = [callbackNotifier(() => {})];
    const cases: [unknown, string][] = [
      [{ store, notifiers: [] }, 'notifiers'],
      [{ store: {}, notifiers }, 'store'],
      [{ store, notifiers: [{}] }, 'notifiers[0]'],
      [{ store, notifiers, every: 0 }, 'every'],
      [{ store, notifiers, overdue: { export: -1 } }, 'overdue.export'],
      [{ store, notifiers, failed: 'yes' }, 'failed'],
      [{ store, notifiers, settleMs: -1 }, 'settleMs'],
      [{ store, notifiers, lateAfterMs: 0 }, 'lateAfterMs'],
    ];
    for (const [options, field] of cases) {
      let error: unknown;
      try {
        fleetWatchdog(options as Parameters<typeof fleetWatchdog>[0]);
      } catch (e) {
        error = e;
      }
      expect(isFleetcronError(error) && error.code, field).toBe('INVALID_OPTION');
      expect((error as { field?: string }).field, field).toBe(field);
    }
  });
});
