import { alertId, alertKey } from '@fleetcron/core';
import type { WebhookBody } from '@fleetcron/notify';
import { type ReceivedRequest, startHttpReceiver } from '@fleetcron/testkit';
import { expect } from 'vitest';
import type { FleetScenario } from '../types.js';
import { pollUntil } from '../util.js';
import type { ChildJob, ChildWatchdog } from './child-config.js';
import { type InstanceChild, startInstanceChild } from './child-process.js';
import {
  allExecutions,
  CONTROL_HEARTBEAT_MS,
  type ControlSetup,
  withControlSetup,
} from './control-harness.js';

/** Child processes of the fleet. */
export const INSTANCES = 4;
/** The failing job's name. */
export const FAILING_JOB = 'watchdog-fails';
/** The watchdog job's name (its default). */
export const WATCHDOG_JOB = 'fleetcron.watchdog';
/** The header naming the sending instance (set by the children's webhook notifier). */
const SENDER_HEADER = 'x-fleetcron-test-instance';

/** One `run_failed` alert the receiver got, with how it was answered. */
interface Received {
  readonly id: string;
  readonly job: string | null;
  readonly fireAt: number | null;
  readonly sender: string;
  readonly answer: ReceivedRequest['answer'];
}

/** The webhook bodies of `run_failed` alerts among `requests`. */
function runFailed(requests: readonly ReceivedRequest[]): Received[] {
  return requests.flatMap((request) => {
    const body = JSON.parse(request.body) as WebhookBody;
    if (body.alert.kind !== 'run_failed') return [];
    const { id, job, fireAt } = body.alert;
    const sender = String(request.headers[SENDER_HEADER] ?? '');
    return [{ id, job, fireAt, sender, answer: request.answer }];
  });
}

/** Starts the fleet: every child runs `jobs` and the watchdog. */
export function startFleet(
  setup: ControlSetup,
  ids: string[],
  jobs: ChildJob[],
  watchdog: ChildWatchdog,
): Promise<InstanceChild[]> {
  return Promise.all(
    ids.map(async (instanceId) =>
      startInstanceChild(
        {
          instanceId,
          leaseMs: setup.leaseMs,
          jobs,
          point: null,
          heartbeatMs: CONTROL_HEARTBEAT_MS,
          ledgerPath: setup.ledger.path,
          instanceModule: setup.module,
          watchdog,
        },
        await setup.fixture.newLock(),
        setup.store,
        60_000 * setup.scale,
      ),
    ),
  );
}

/**
 * The fleet watchdog across real processes (issue #30): 4 child processes each run a job that
 * fails every 2 s and `fleetWatchdog` (every 2 s, settle 500 ms) notifying a real HTTP receiver
 * (the testkit's) through `webhookNotifier`. Once a few failures were notified, the receiver
 * hangs the next request and the instance that sent it is SIGKILLed mid-send; the others run on.
 * Judged from the store's history and what the receiver got: every failed run that ended before
 * the last watchdog run's span is delivered (answered 2xx) once, the hung one included (sent
 * again by another instance, with the same id); an alert arrives twice only when the killed
 * instance had delivered it before it hung (its span is judged again: at least once).
 */
export const watchdogNotifiesOnce: FleetScenario = {
  title:
    'fleet watchdog, 4 processes, a job failing every 2 s: each failure notified once, also when the sending instance is SIGKILLed mid-send',
  timeoutMs: 120_000,
  run: (options) =>
    withControlSetup(options, async (setup) => {
      const { scale, tag, store } = setup;
      const receiver = await startHttpReceiver();
      const ids = Array.from({ length: INSTANCES }, (_, i) => `dog${i + 1}-${tag}`);
      const watchdog: ChildWatchdog = { url: receiver.url, everyMs: 2000, settleMs: 500 };
      let children: InstanceChild[] = [];
      let hung: Received | undefined;
      try {
        const failing: ChildJob = { name: FAILING_JOB, everyMs: 2000, fails: true };
        children = await startFleet(setup, ids, [failing], watchdog);
        await pollUntil(() => new Set(runFailed(receiver.requests).map((r) => r.id)).size >= 2, {
          timeoutMs: 30_000 * scale,
          message: 'the first two failures to be notified',
        });
        const before = receiver.requests.length;
        receiver.hangNext(1);
        const request = await pollUntil(() => runFailed(receiver.requests.slice(before))[0], {
          timeoutMs: 20_000 * scale,
          message: 'a notification to hang',
        });
        hung = request;
        const sender = children[ids.indexOf(request.sender)];
        expect(sender, `the hung request names its sender (${request.sender})`).toBeDefined();
        await sender?.kill();
        children = children.filter((c) => c !== sender);
        // another instance's watchdog judges the dead one's span again and sends it again
        await pollUntil(
          () => runFailed(receiver.requests).some((r) => r.id === request.id && r.answer === 200),
          {
            timeoutMs: (setup.leaseMs * 3 + 20_000) * scale,
            message: `the hung alert ${request.id} to be sent again by another instance`,
          },
        );
        await pollUntil(() => new Set(runFailed(receiver.requests).map((r) => r.id)).size >= 5, {
          timeoutMs: 30_000 * scale,
          message: 'three more failures to be notified',
        });
      } finally {
        await Promise.all(children.map((c) => c.stop(20_000 * scale)));
        await Promise.all(children.map((c) => c.kill()));
        await receiver.close();
      }

      // the span judged by the last successful watchdog run ended settleMs before its fire
      const watchdogRuns = await allExecutions(store, WATCHDOG_JOB);
      const judgedTo =
        Math.max(...watchdogRuns.filter((r) => r.status === 'succeeded').map((r) => r.fireAt)) -
        watchdog.settleMs;
      const failures = (await allExecutions(store, FAILING_JOB)).filter(
        (r) => r.status === 'failed' && r.finishedAt !== null && r.finishedAt <= judgedTo,
      );
      const received = runFailed(receiver.requests);
      const delivered = received.filter((r) => r.answer === 200);
      const deliveries = new Map<string, number>();
      for (const r of delivered) deliveries.set(r.id, (deliveries.get(r.id) ?? 0) + 1);
      const describe = received
        .map((r) => `${r.id} ${r.job} ${r.fireAt} from ${r.sender}: ${r.answer}`)
        .join('\n');
      expect(failures.length, 'failures judged').toBeGreaterThanOrEqual(5);
      for (const row of failures) {
        const id = alertId(alertKey('run_failed', row.job, row.fireAt), row.finishedAt ?? 0);
        expect(
          deliveries.get(id) ?? 0,
          `failure of ${row.job} fire ${new Date(row.fireAt).toISOString()} delivered:\n${describe}`,
        ).toBeGreaterThanOrEqual(1);
      }
      // the killed sender's run may have delivered alerts of its span before the hung one: the
      // next run judges that span again and sends them again (same ids: at least once). No other
      // alert may arrive twice.
      const killed = hung?.sender;
      const twice = [...deliveries]
        .filter(([id, n]) => n > 1 && !delivered.some((r) => r.id === id && r.sender === killed))
        .map(([id]) => id);
      expect(twice, `alerts delivered more than once:\n${describe}`).toEqual([]);
      expect(hung, 'a notification was hung').toBeDefined();
      expect(
        received.filter((r) => r.id === hung?.id).map((r) => r.answer),
        'the hung alert: hung once, then delivered once by another instance',
      ).toEqual(['hung', 200]);
    }),
};

/** The job of {@link watchdogMissedFires}: it succeeds; its fires are missed while the fleet is down. */
const MISSED_JOB = 'watchdog-missed';

/** One `fires_missed` alert the receiver got. */
interface ReceivedMissed {
  readonly id: string;
  readonly fires: number[];
  readonly answer: ReceivedRequest['answer'];
}

/** The webhook bodies of `fires_missed` alerts of {@link MISSED_JOB} among `requests`. */
function firesMissed(requests: readonly ReceivedRequest[]): ReceivedMissed[] {
  return requests.flatMap((request) => {
    const body = JSON.parse(request.body) as WebhookBody;
    if (body.alert.kind !== 'fires_missed' || body.alert.job !== MISSED_JOB) return [];
    const fires = (body.alert.details as { fires?: number[] }).fires ?? [];
    return [{ id: body.alert.id, fires, answer: request.answer }];
  });
}

/**
 * The fleet watchdog after the whole fleet was down (issue #30): 4 child processes run a job
 * every second and `fleetWatchdog` (every 2 s, settle 500 ms) to a real HTTP receiver; all 4 are
 * SIGKILLed together and 4 new processes start 4 s later. The restarted fleet records the fires
 * it missed (`skipped`/`missed`, catch-up `'skip'`), and the watchdog notifies them. Judged from
 * the store's history and what the receiver got: every fire recorded missed is in exactly one
 * delivered `fires_missed` alert (one alert for the outage, or one per span when the records
 * straddle two), and no alert is delivered twice.
 */
export const watchdogMissedFires: FleetScenario = {
  title:
    'fleet watchdog, the whole fleet SIGKILLed across fires: the missed fires notified once when it returns',
  timeoutMs: 120_000,
  run: (options) =>
    withControlSetup(options, async (setup) => {
      const { scale, tag, store, ledger } = setup;
      if (setup.capabilities.durableMark === undefined) {
        // a lock without a catch-up mark knows of no missed fire: nothing is recorded missed
        expect(setup.capabilities.durableMark, 'a lock without a catch-up mark').toBeUndefined();
        return;
      }
      const receiver = await startHttpReceiver();
      const watchdog: ChildWatchdog = { url: receiver.url, everyMs: 2000, settleMs: 500 };
      const jobs: ChildJob[] = [{ name: MISSED_JOB, everyMs: 1000 }];
      const first = Array.from({ length: INSTANCES }, (_, i) => `up${i + 1}-${tag}`);
      const again = Array.from({ length: INSTANCES }, (_, i) => `back${i + 1}-${tag}`);
      let children: InstanceChild[] = [];
      try {
        children = await startFleet(setup, first, jobs, watchdog);
        await pollUntil(
          () => ledger.read().filter((e) => e.kind === 'start' && e.job === MISSED_JOB).length >= 3,
          { timeoutMs: 30_000 * scale, message: 'the job to run three times' },
        );
        await Promise.all(children.map((c) => c.kill()));
        const downUntil = Date.now() + 4000;
        await pollUntil(() => Date.now() >= downUntil, {
          timeoutMs: 10_000,
          message: 'the fleet to stay down 4 s',
        });
        children = await startFleet(setup, again, jobs, watchdog);
        await pollUntil(() => firesMissed(receiver.requests).length > 0, {
          timeoutMs: (setup.leaseMs * 3 + 30_000) * scale,
          message: 'the missed fires to be notified',
        });
        // two more watchdog runs: a second notification of the same fires would show
        const until = Date.now() + 2 * watchdog.everyMs + 1000;
        await pollUntil(() => Date.now() >= until, {
          timeoutMs: 10_000,
          message: 'two more watchdog runs',
        });
      } finally {
        await Promise.all(children.map((c) => c.stop(20_000 * scale)));
        await Promise.all(children.map((c) => c.kill()));
        await receiver.close();
      }

      const missed = (await allExecutions(store, MISSED_JOB))
        .filter((r) => r.status === 'skipped' && r.reason === 'missed')
        .map((r) => r.fireAt)
        .sort((a, b) => a - b);
      const alerts = firesMissed(receiver.requests);
      const delivered = alerts.filter((a) => a.answer === 200);
      const describe = alerts.map((a) => `${a.id} ${a.fires.join(',')}: ${a.answer}`).join('\n');
      expect(missed.length, 'fires recorded missed after the outage').toBeGreaterThanOrEqual(2);
      const ids = delivered.map((a) => a.id);
      expect(new Set(ids).size, `no alert delivered twice:\n${describe}`).toBe(ids.length);
      const notified = delivered.flatMap((a) => a.fires).sort((a, b) => a - b);
      expect(notified, `every missed fire in exactly one alert:\n${describe}`).toEqual(missed);
    }),
};
