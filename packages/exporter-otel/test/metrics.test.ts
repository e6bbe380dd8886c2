import type { FleetcronEvent } from '@fleetcron/core';
import { afterEach, describe, expect, it } from 'vitest';
import { Attr, fleetcronOpenTelemetry, MetricNames, RUN_DURATION_BUCKETS } from '../src/index.js';
import { otelHarness, publish } from './otel-harness.js';

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function setup(options: Parameters<typeof fleetcronOpenTelemetry>[0] = {}) {
  const h = otelHarness();
  const otel = fleetcronOpenTelemetry({
    tracerProvider: h.tracerProvider,
    meterProvider: h.meterProvider,
    ...options,
  });
  cleanups.push(h.close, () => otel.shutdown());
  return { h, otel };
}

const base = (job: string, fireAt: number) => ({ instanceId: 'i-1', job, fireAt, at: fireAt });

function fire(
  job: string,
  fireAt: number,
  status: 'succeeded' | 'failed',
  durationMs: number,
): FleetcronEvent[] {
  return [
    { type: 'fire.scheduled', ...base(job, fireAt) },
    { type: 'claim.won', ...base(job, fireAt), backend: 'memory', token: 1, latencyMs: 2 },
    { type: 'run.started', ...base(job, fireAt), token: 1, lagMs: 250 },
    {
      type: 'run.finished',
      ...base(job, fireAt),
      token: 1,
      status,
      attempt: 1,
      durationMs,
      error: status === 'failed' ? new Error('x') : null,
    },
  ];
}

describe('metrics from lifecycle events', () => {
  it('counts runs, durations, claims, lag, skips, misses, lost leases and store errors', async () => {
    const { h } = setup();
    const events: FleetcronEvent[] = [
      ...fire('billing', 1000, 'succeeded', 1500),
      ...fire('billing', 2000, 'failed', 500),
      ...fire('report', 1000, 'succeeded', 20),
      {
        type: 'claim.lost',
        ...base('billing', 3000),
        backend: 'memory',
        reason: 'claimed',
        latencyMs: 4,
      },
      {
        type: 'claim.lost',
        ...base('billing', 3000),
        backend: 'memory',
        reason: 'stale',
        latencyMs: 6,
      },
      { type: 'claim.busy', ...base('billing', 4000), backend: 'memory', latencyMs: 1 },
      { type: 'fire.skipped', ...base('billing', 4000), reason: 'busy' },
      {
        type: 'claim.failed',
        ...base('billing', 5000),
        backend: 'memory',
        latencyMs: 3000,
        error: new Error('down'),
      },
      { type: 'fire.skipped', ...base('billing', 5000), reason: 'backend_unavailable' },
      { type: 'fire.missed', ...base('report', 6000), lateMs: 90_000 },
      { type: 'lease.lost', ...base('report', 7000), token: 3, error: null },
      { type: 'store.failed', ...base('report', 7000), error: new Error('disk full') },
    ];
    for (const event of events) publish(event);

    expect(await h.sum(MetricNames.runs)).toBe(3);
    expect(
      await h.sum(MetricNames.runs, { [Attr.job]: 'billing', [Attr.runStatus]: 'succeeded' }),
    ).toBe(1);
    expect(
      await h.sum(MetricNames.runs, { [Attr.job]: 'billing', [Attr.runStatus]: 'failed' }),
    ).toBe(1);
    expect(
      await h.sum(MetricNames.runs, { [Attr.job]: 'report', [Attr.runStatus]: 'succeeded' }),
    ).toBe(1);
    expect(await h.sum(MetricNames.runsActive)).toBe(0);

    const billingDuration = await h.histogram(MetricNames.runDuration, { [Attr.job]: 'billing' });
    expect(billingDuration.count).toBe(2);
    expect(billingDuration.sum).toBeCloseTo(2.0);
    // bucket boundaries in seconds, not the SDK's millisecond defaults
    expect(billingDuration.points[0]?.value.buckets.boundaries).toEqual(RUN_DURATION_BUCKETS);

    const won = await h.histogram(MetricNames.claimDuration, {
      [Attr.lockBackend]: 'memory',
      [Attr.claimResult]: 'won',
    });
    expect(won.count).toBe(3);
    expect(won.sum).toBeCloseTo(0.006);
    expect(
      (await h.histogram(MetricNames.claimDuration, { [Attr.claimResult]: 'lost' })).count,
    ).toBe(2);
    expect(
      (await h.histogram(MetricNames.claimDuration, { [Attr.claimLostReason]: 'stale' })).count,
    ).toBe(1);
    expect(
      (await h.histogram(MetricNames.claimDuration, { [Attr.claimResult]: 'busy' })).count,
    ).toBe(1);
    expect(
      (await h.histogram(MetricNames.claimDuration, { [Attr.claimResult]: 'failed' })).sum,
    ).toBeCloseTo(3);

    const lag = await h.histogram(MetricNames.fireLag);
    expect(lag.count).toBe(3);
    expect(lag.sum).toBeCloseTo(0.75);

    expect(await h.sum(MetricNames.fireSkipped, { [Attr.skipReason]: 'busy' })).toBe(1);
    expect(await h.sum(MetricNames.fireSkipped, { [Attr.skipReason]: 'backend_unavailable' })).toBe(
      1,
    );
    expect(await h.sum(MetricNames.fireMissed, { [Attr.job]: 'report' })).toBe(1);
    expect(await h.sum(MetricNames.leaseLost, { [Attr.job]: 'report' })).toBe(1);
    expect(await h.sum(MetricNames.storeErrors)).toBe(1);

    // metric descriptors carry the units
    const all = await h.collect();
    expect(all.get(MetricNames.runDuration)?.descriptor.unit).toBe('s');
    expect(all.get(MetricNames.claimDuration)?.descriptor.unit).toBe('s');
    expect(all.get(MetricNames.fireLag)?.descriptor.unit).toBe('s');
    expect(all.get(MetricNames.runs)?.descriptor.unit).toBe('{run}');
  });

  it('tracks runs in progress', async () => {
    const { h } = setup();
    const [, , started] = fire('billing', 1000, 'succeeded', 1);
    if (started) publish(started);
    expect(await h.sum(MetricNames.runsActive, { [Attr.job]: 'billing' })).toBe(1);
  });

  it('does not subtract a run that finished without starting (lease lost during the claim)', async () => {
    const { h } = setup();
    const [, , , finished] = fire('billing', 1000, 'succeeded', 1);
    if (finished) publish(finished);
    expect(await h.sum(MetricNames.runsActive)).toBe(0);
    expect(await h.sum(MetricNames.runs)).toBe(1);
  });

  it("reports each instance's clock offset and rtt from the backend's clock, and runs that started early", async () => {
    const { h } = setup();
    const offset = (instanceId: string, offsetMs: number, rttMs: number): FleetcronEvent => ({
      ...{ type: 'clock.offset', instanceId, job: 'billing', fireAt: 1000, at: 1000 },
      ...{ backend: 'postgres', offsetMs, rttMs, boundMs: rttMs / 2 },
    });
    publish(offset('fast', -2900, 8));
    publish(offset('fast', -3000, 2)); // the newest estimate of an instance replaces the last
    publish(offset('slow', 2000, 4));
    const at = (instanceId: string) => ({
      [Attr.instanceId]: instanceId,
      [Attr.lockBackend]: 'postgres',
    });
    expect(await h.sum(MetricNames.clockOffset, at('fast'))).toBeCloseTo(-3);
    expect(await h.sum(MetricNames.clockRtt, at('fast'))).toBeCloseTo(0.002);
    expect(await h.sum(MetricNames.clockOffset, at('slow'))).toBeCloseTo(2);
    expect((await h.collect()).get(MetricNames.clockOffset)?.descriptor.unit).toBe('s');

    publish({ type: 'run.started', ...base('billing', 5000), token: 1, lagMs: -40 });
    publish({ type: 'run.started', ...base('billing', 6000), token: 2, lagMs: 12 });
    expect(await h.sum(MetricNames.fireEarly, { [Attr.job]: 'billing' })).toBe(1);
  });

  it('creates the series the alert rules watch at 0 when a job is first scheduled', async () => {
    const { h } = setup();
    publish({ type: 'fire.scheduled', ...base('export', 1000) });
    publish({ type: 'fire.scheduled', ...base('export', 2000) }); // once per job
    const points = async (name: string) =>
      ((await h.collect()).get(name)?.dataPoints ?? []).map((p) => [p.attributes, p.value]);
    const job = { [Attr.job]: 'export' };
    expect(await points(MetricNames.runs)).toEqual(
      ['succeeded', 'failed', 'timed_out', 'lease_lost'].map((status) => [
        { ...job, [Attr.runStatus]: status },
        0,
      ]),
    );
    expect(await points(MetricNames.fireSkipped)).toEqual(
      ['missed', 'backend_unavailable', 'lease_expired'].map((reason) => [
        { ...job, [Attr.skipReason]: reason },
        0,
      ]),
    );
    for (const name of [MetricNames.fireMissed, MetricNames.leaseLost, MetricNames.storeErrors]) {
      expect(await points(name)).toEqual([[job, 0]]);
    }
    for (const event of fire('export', 3000, 'failed', 1)) publish(event);
    expect(await h.sum(MetricNames.runs, { ...job, [Attr.runStatus]: 'failed' })).toBe(1);
  });

  it("keeps each job's last success time (epoch s), ignoring failures and older successes", async () => {
    const { h } = setup();
    for (const event of fire('export', 10_000, 'succeeded', 1)) publish(event);
    for (const event of fire('export', 20_000, 'failed', 1)) publish(event);
    for (const event of fire('report', 30_000, 'succeeded', 1)) publish(event);
    const late = fire('export', 5_000, 'succeeded', 1).at(-1) as FleetcronEvent;
    publish(late); // a slow run of an older fire ending now, with an older clock reading
    expect(await h.sum(MetricNames.lastSuccess, { [Attr.job]: 'export' })).toBe(10);
    expect(await h.sum(MetricNames.lastSuccess, { [Attr.job]: 'report' })).toBe(30);
    expect((await h.collect()).get(MetricNames.lastSuccess)?.descriptor.unit).toBe('s');
  });

  it('counts failed alert deliveries by notifier and whether the delivery gave up', async () => {
    const { h } = setup();
    const failed = (notifier: string, retryInMs: number | null): FleetcronEvent => ({
      ...{ type: 'alert.delivery_failed', instanceId: 'i-1', at: 1000, notifier },
      ...{ alertId: 'abc', alertKey: 'run_failed:x', action: 'opened', attempt: 1, retryInMs },
      error: new Error('HTTP 503'),
    });
    publish(failed('webhook', 1000));
    publish(failed('webhook', null));
    publish(failed('email', null));
    const of = (notifier: string, gaveUp: boolean) => ({
      [Attr.notifier]: notifier,
      [Attr.gaveUp]: gaveUp,
    });
    expect(await h.sum(MetricNames.alertDeliveryFailed, of('webhook', false))).toBe(1);
    expect(await h.sum(MetricNames.alertDeliveryFailed, of('webhook', true))).toBe(1);
    expect(await h.sum(MetricNames.alertDeliveryFailed, of('email', true))).toBe(1);
  });

  it('counts history rows the retention job deleted, by why its run stopped', async () => {
    const { h } = setup();
    const pruned = (deleted: number, stoppedBy: 'done' | 'budget' | 'signal'): FleetcronEvent => ({
      ...{ type: 'history.pruned', instanceId: 'i-1', job: 'fleetcron.history-retention' },
      ...{ fireAt: 0, at: 1000, deleted, jobsVisited: 3, stoppedBy },
    });
    publish(pruned(1000, 'budget'));
    publish(pruned(1000, 'budget'));
    publish(pruned(17, 'done'));
    const by = (stoppedBy: string) => ({ [Attr.prunedStoppedBy]: stoppedBy });
    expect(await h.sum(MetricNames.historyPruned, by('budget'))).toBe(2000);
    expect(await h.sum(MetricNames.historyPruned, by('done'))).toBe(17);
    expect((await h.collect()).get(MetricNames.historyPruned)?.descriptor.unit).toBe('{execution}');
  });

  it('records nothing with metrics: false, and nothing after shutdown()', async () => {
    const off = setup({ metrics: false });
    for (const event of fire('billing', 1000, 'succeeded', 1)) publish(event);
    expect(await off.h.sum(MetricNames.runs)).toBe(0);

    const { h, otel } = setup();
    otel.shutdown();
    for (const event of fire('billing', 1000, 'succeeded', 1)) publish(event);
    expect(await h.sum(MetricNames.runs)).toBe(0);
  });
});
