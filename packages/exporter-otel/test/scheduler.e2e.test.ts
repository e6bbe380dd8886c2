import {
  every,
  FakeClock,
  type Lease,
  type Lock,
  MemoryLock,
  retry,
  Scheduler,
} from '@fleetcron/core';
import { SpanStatusCode, trace } from '@opentelemetry/api';
import { afterEach, describe, expect, it } from 'vitest';
import { Attr, fleetcronOpenTelemetry, MetricNames, SpanNames } from '../src/index.js';
import { otelHarness } from './otel-harness.js';

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A lock that loses the leases of `job`: every renewal answers "not yours any more". */
function losingLeasesOf(job: string, lock: Lock): Lock {
  return {
    backend: lock.backend,
    capabilities: lock.capabilities,
    windowMs: lock.windowMs,
    claim: (request) => lock.claim(request),
    extend: (lease: Lease, ms: number) =>
      lease.key === job ? Promise.resolve(null) : lock.extend(lease, ms),
    release: (lease) => lock.release(lease),
    inspect: (key) => lock.inspect(key),
  };
}

describe('with a real Scheduler fleet (MemoryLock, FakeClock)', () => {
  it('traces every won fire once and counts runs, retries, lost claims and lost leases', async () => {
    const h = otelHarness();
    const otel = fleetcronOpenTelemetry({
      tracerProvider: h.tracerProvider,
      meterProvider: h.meterProvider,
      losingSpans: true,
    });
    cleanups.push(h.close, () => otel.shutdown());

    const clock = new FakeClock();
    const shared = new MemoryLock({ clock });
    const lock = losingLeasesOf('fragile', shared);
    const app = h.tracerProvider.getTracer('app');
    const flakyCalls = new Map<number, number>();

    const fleet = ['a', 'b'].map((instanceId) => {
      const scheduler = new Scheduler({ lock, clock, instanceId, middleware: [otel.middleware] });
      scheduler.add({
        name: 'ok',
        trigger: every(1000),
        run: async () => {
          await app.startActiveSpan('ok-work', async (span) => {
            await clock.sleep(5);
            span.end();
          });
        },
      });
      scheduler.add({
        name: 'flaky',
        trigger: every(1000),
        // fails its first attempt of every fire
        middleware: [
          retry({ attempts: 3, jitter: 'none', backoff: { initialMs: 10 } }),
          otel.attemptMiddleware,
        ],
        run: (ctx) => {
          const calls = (flakyCalls.get(ctx.fireAt.getTime()) ?? 0) + 1;
          flakyCalls.set(ctx.fireAt.getTime(), calls);
          if (calls === 1) throw new Error('first attempt fails');
        },
      });
      scheduler.add({
        name: 'fragile',
        trigger: every(1000),
        leaseMs: 300,
        // runs until its lease is lost (renewal at 100 ms answers null)
        run: (ctx) => ctx.clock.sleep(10_000, ctx.signal),
      });
      return scheduler;
    });

    for (const scheduler of fleet) scheduler.start();
    await clock.advance(3500);
    const stopped = Promise.all(fleet.map((s) => s.stop({ drainMs: 1000 })));
    await clock.advance(5000);
    await stopped;

    // --- spans: exactly one fleetcron.fire per (job, fire), on the winner
    const fires = h.spans(SpanNames.fire);
    const ids = fires.map(
      (s) => `${s.attributes[Attr.job]}@${s.attributes[Attr.fireScheduledTime]}`,
    );
    expect(new Set(ids).size).toBe(9);
    expect(fires).toHaveLength(9);
    for (const fire of fires) {
      expect(fire.attributes[Attr.claimResult]).toBe('won');
      expect(fire.attributes[Attr.lockBackend]).toBe('memory');
      expect(typeof fire.attributes[Attr.claimDurationMs]).toBe('number');
      expect(fire.attributes[Attr.fireLagMs]).toBe(0);
      expect(['a', 'b']).toContain(fire.attributes[Attr.instanceId]);
      expect(fire.attributes[Attr.fencingToken]).toBeGreaterThan(0);
    }
    const byJob = (job: string) => fires.filter((s) => s.attributes[Attr.job] === job);

    // the job's own span is a child of its fire span
    for (const fire of byJob('ok')) {
      expect(fire.attributes[Attr.runStatus]).toBe('succeeded');
      const children = h
        .spans('ok-work')
        .filter((s) => s.parentSpanContext?.spanId === fire.spanContext().spanId);
      expect(children).toHaveLength(1);
    }
    // fencing tokens of one job increase fire after fire
    const tokens = byJob('ok')
      .sort((x, y) =>
        String(x.attributes[Attr.fireScheduledTime]).localeCompare(
          String(y.attributes[Attr.fireScheduledTime]),
        ),
      )
      .map((s) => s.attributes[Attr.fencingToken] as number);
    expect(tokens).toEqual([...tokens].sort((x, y) => x - y));

    // retried fires: one fire span (attempt 2, succeeded), two attempt children
    for (const fire of byJob('flaky')) {
      expect(fire.attributes[Attr.attempt]).toBe(2);
      expect(fire.attributes[Attr.runStatus]).toBe('succeeded');
      const attempts = h
        .spans(SpanNames.attempt)
        .filter((s) => s.parentSpanContext?.spanId === fire.spanContext().spanId);
      expect(attempts.map((s) => s.attributes[Attr.runStatus])).toEqual(['failed', 'succeeded']);
    }

    // lost leases: the span says so, with the error recorded
    for (const fire of byJob('fragile')) {
      expect(fire.attributes[Attr.runStatus]).toBe('lease_lost');
      expect(fire.status.code).toBe(SpanStatusCode.ERROR);
      expect(fire.attributes[Attr.errorType]).toBe('LEASE_LOST');
      expect(fire.events.map((e) => e.name)).toEqual(['fleetcron.lease.lost', 'exception']);
    }

    // the losing instance of every fire emitted a fleetcron.claim span
    const claims = h.spans(SpanNames.claim);
    expect(claims).toHaveLength(9);
    for (const claim of claims) {
      expect(claim.attributes[Attr.claimResult]).toBe('lost');
      expect(claim.attributes[Attr.claimLostReason]).toBe('claimed');
    }

    // --- metrics
    expect(await h.sum(MetricNames.runs, { [Attr.job]: 'ok', [Attr.runStatus]: 'succeeded' })).toBe(
      3,
    );
    expect(
      await h.sum(MetricNames.runs, { [Attr.job]: 'flaky', [Attr.runStatus]: 'succeeded' }),
    ).toBe(3);
    expect(
      await h.sum(MetricNames.runs, { [Attr.job]: 'fragile', [Attr.runStatus]: 'lease_lost' }),
    ).toBe(3);
    expect(await h.sum(MetricNames.runs)).toBe(9);
    expect(await h.sum(MetricNames.runsActive)).toBe(0);
    expect(await h.sum(MetricNames.leaseLost, { [Attr.job]: 'fragile' })).toBe(3);
    expect(await h.sum(MetricNames.leaseLost)).toBe(3);

    const won = await h.histogram(MetricNames.claimDuration, {
      [Attr.lockBackend]: 'memory',
      [Attr.claimResult]: 'won',
    });
    const lost = await h.histogram(MetricNames.claimDuration, {
      [Attr.lockBackend]: 'memory',
      [Attr.claimResult]: 'lost',
    });
    expect(won.count).toBe(9);
    expect(lost.count).toBe(9);

    const lag = await h.histogram(MetricNames.fireLag);
    expect(lag.count).toBe(9);
    expect(lag.sum).toBe(0);

    // ok sleeps 5 ms, flaky waits 10 ms between attempts, fragile runs until the renewal (100 ms)
    const duration = async (job: string) =>
      (await h.histogram(MetricNames.runDuration, { [Attr.job]: job })).sum;
    expect(await duration('ok')).toBeCloseTo(0.015);
    expect(await duration('flaky')).toBeCloseTo(0.03);
    expect(await duration('fragile')).toBeCloseTo(0.3);

    expect(trace.getActiveSpan()).toBeUndefined();
  });

  it('counts skipped fires by reason (overlap) with the skipping instance', async () => {
    const h = otelHarness();
    const otel = fleetcronOpenTelemetry({
      tracerProvider: h.tracerProvider,
      meterProvider: h.meterProvider,
    });
    cleanups.push(h.close, () => otel.shutdown());
    const clock = new FakeClock();
    const lock = new MemoryLock({ clock });
    const scheduler = new Scheduler({
      lock,
      clock,
      instanceId: 'solo',
      middleware: [otel.middleware],
    });
    // each run takes 2.5 fires' worth of time: the fires in between find the lease busy
    scheduler.add({
      name: 'slow',
      trigger: every(1000),
      leaseMs: 10_000,
      run: (ctx) => ctx.clock.sleep(2500),
    });
    scheduler.start();
    await clock.advance(4200);
    const stopped = scheduler.stop({ drainMs: 5000 });
    await clock.advance(5000);
    await stopped;

    // fires at 1 s (runs to 3.5 s), 2 s and 3 s busy, 4 s runs until stop drains it
    expect(
      await h.sum(MetricNames.fireSkipped, { [Attr.job]: 'slow', [Attr.skipReason]: 'overlap' }),
    ).toBe(2);
    expect(
      (await h.histogram(MetricNames.claimDuration, { [Attr.claimResult]: 'busy' })).count,
    ).toBe(2);
    expect(
      await h.sum(MetricNames.runs, { [Attr.job]: 'slow', [Attr.runStatus]: 'succeeded' }),
    ).toBe(2);
    expect(h.spans(SpanNames.fire)).toHaveLength(2);
  });
});
