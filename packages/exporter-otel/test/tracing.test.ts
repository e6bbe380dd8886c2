import {
  compose,
  InvalidOptionError,
  isFleetcronError,
  type JobContext,
  JobTimeoutError,
  LeaseLostError,
  type Middleware,
} from '@fleetcron/core';
import { context, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { afterEach, describe, expect, it } from 'vitest';
import { Attr, fleetcronOpenTelemetry, SpanNames } from '../src/index.js';
import { FireTracing } from '../src/tracing.js';
import { about, jobContext, otelHarness, publish } from './otel-harness.js';

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

/** A minimal retry for driving attempts before core's retry() lands. */
const retryThrice: Middleware = async (ctx, next) => {
  for (let attempt = ctx.attempt; ; attempt++) {
    try {
      await next({ ...ctx, attempt });
      return;
    } catch (error) {
      if (attempt >= 3) throw error;
    }
  }
};

describe('fleetcron.fire span', () => {
  it('runs the job inside the span: spans the job creates are its children', async () => {
    const { h, otel } = setup();
    const appTracer = h.tracerProvider.getTracer('app');
    const ctx = jobContext();
    const run = compose([otel.middleware], async () => {
      await new Promise((resolve) => setImmediate(resolve));
      await appTracer.startActiveSpan('charge-cards', async (span) => {
        await Promise.resolve();
        appTracer.startSpan('grandchild').end();
        span.end();
      });
    });
    await run(ctx);

    const [fire] = h.spans(SpanNames.fire);
    const [child] = h.spans('charge-cards');
    const [grandchild] = h.spans('grandchild');
    expect(fire).toBeDefined();
    expect(child?.parentSpanContext?.spanId).toBe(fire?.spanContext().spanId);
    expect(child?.spanContext().traceId).toBe(fire?.spanContext().traceId);
    expect(grandchild?.parentSpanContext?.spanId).toBe(child?.spanContext().spanId);
    // the fire starts its own trace
    expect(fire?.parentSpanContext).toBeUndefined();
  });

  it('starts a new trace even when the scheduler runs inside an active span', async () => {
    const { h, otel } = setup();
    const outer = h.tracerProvider.getTracer('app').startSpan('app-startup');
    await context.with(trace.setSpan(context.active(), outer), () =>
      compose([otel.middleware], () => {})(jobContext()),
    );
    outer.end();
    const [fire] = h.spans(SpanNames.fire);
    expect(fire?.parentSpanContext).toBeUndefined();
    expect(fire?.spanContext().traceId).not.toBe(outer.spanContext().traceId);
  });

  it('carries the fire attributes, with the claim backend and latency from claim.won', async () => {
    const { h, otel } = setup();
    const ctx = jobContext({ token: 12, instanceId: 'i-9', job: 'report' });
    publish({ type: 'claim.won', ...about(ctx), backend: 'memory', token: 12, latencyMs: 3.5 });
    await compose([otel.middleware], () => {})(ctx);

    const [fire] = h.spans(SpanNames.fire);
    expect(fire?.kind).toBe(SpanKind.INTERNAL);
    expect(fire?.attributes).toEqual({
      [Attr.job]: 'report',
      [Attr.fireScheduledTime]: '2026-01-01T00:00:00.000Z',
      [Attr.fireLagMs]: 42,
      [Attr.instanceId]: 'i-9',
      [Attr.fencingToken]: 12,
      [Attr.attempt]: 1,
      [Attr.claimResult]: 'won',
      [Attr.lockBackend]: 'memory',
      [Attr.claimDurationMs]: 3.5,
      [Attr.runStatus]: 'succeeded',
    });
    expect(fire?.status.code).toBe(SpanStatusCode.UNSET);
    expect(fire?.events).toEqual([]);
    expect(fire?.instrumentationScope.name).toBe('@fleetcron/exporter-otel');
  });

  it('does not take the claim data of another instance or fire', async () => {
    const { h, otel } = setup();
    const ctx = jobContext();
    publish({
      type: 'claim.won',
      ...about(ctx),
      instanceId: 'other',
      backend: 'redis',
      token: 7,
      latencyMs: 9,
    });
    publish({
      type: 'claim.won',
      ...about(ctx),
      fireAt: 1,
      backend: 'redis',
      token: 7,
      latencyMs: 9,
    });
    await compose([otel.middleware], () => {})(ctx);
    const [fire] = h.spans(SpanNames.fire);
    expect(fire?.attributes[Attr.lockBackend]).toBeUndefined();
    expect(fire?.attributes[Attr.claimDurationMs]).toBeUndefined();
  });

  it('records a failure on the span and rethrows it unchanged', async () => {
    const { h, otel } = setup();
    const boom = new TypeError('card declined');
    await expect(
      compose([otel.middleware], () => {
        throw boom;
      })(jobContext()),
    ).rejects.toBe(boom);

    const [fire] = h.spans(SpanNames.fire);
    expect(fire?.status).toEqual({ code: SpanStatusCode.ERROR, message: 'card declined' });
    expect(fire?.attributes[Attr.runStatus]).toBe('failed');
    expect(fire?.attributes[Attr.errorType]).toBe('TypeError');
    const exception = fire?.events.find((e) => e.name === 'exception');
    expect(exception?.attributes?.['exception.type']).toBe('TypeError');
    expect(exception?.attributes?.['exception.message']).toBe('card declined');
  });

  it('records a non-Error rejection as an Error', async () => {
    const { h, otel } = setup();
    await expect(
      compose([otel.middleware], () => Promise.reject({ reason: 'nope' }))(jobContext()),
    ).rejects.toEqual({ reason: 'nope' });
    const [fire] = h.spans(SpanNames.fire);
    expect(fire?.status.code).toBe(SpanStatusCode.ERROR);
    expect(fire?.status.message).toContain('nope');
  });

  it('maps timeouts to timed_out and lost leases to lease_lost, with the fleetcron code as error.type', async () => {
    const { h, otel } = setup();
    await expect(
      compose([otel.middleware], () => {
        throw new JobTimeoutError('billing', 1000);
      })(jobContext()),
    ).rejects.toSatisfy((e) => isFleetcronError(e, 'JOB_TIMEOUT'));

    // the job ignores its aborted signal and returns normally: still lease_lost
    const controller = new AbortController();
    const ctx = jobContext({ signal: controller.signal, fireAt: new Date(Date.UTC(2026, 0, 2)) });
    await compose([otel.middleware], () => {
      controller.abort(new LeaseLostError('billing', ctx.fireAt.getTime()));
    })(ctx);

    const [timedOut, leaseLost] = h.spans(SpanNames.fire);
    expect(timedOut?.attributes[Attr.runStatus]).toBe('timed_out');
    expect(timedOut?.attributes[Attr.errorType]).toBe('JOB_TIMEOUT');
    expect(leaseLost?.attributes[Attr.runStatus]).toBe('lease_lost');
    expect(leaseLost?.attributes[Attr.errorType]).toBe('LEASE_LOST');
    expect(leaseLost?.status.code).toBe(SpanStatusCode.ERROR);
  });

  it('counts an error caused by a timeout as timed_out, like the scheduler', async () => {
    const { h, otel } = setup();
    const wrapped = new Error('gave up', { cause: new JobTimeoutError('billing', 5) });
    await expect(
      compose([otel.middleware], () => {
        throw wrapped;
      })(jobContext()),
    ).rejects.toBe(wrapped);
    expect(h.spans(SpanNames.fire)[0]?.attributes[Attr.runStatus]).toBe('timed_out');
  });

  it('adds lease renewals and a lost lease as events of the running span', async () => {
    const { h, otel } = setup();
    const ctx = jobContext();
    await compose([otel.middleware], () => {
      publish({
        type: 'lease.renewed',
        ...about(ctx),
        token: 7,
        expiresAt: Date.UTC(2026, 0, 1, 0, 1),
      });
      publish({ type: 'lease.lost', ...about(ctx), token: 7, error: null });
    })(ctx);
    // after the run: the span is gone, nothing is added to it
    publish({ type: 'lease.renewed', ...about(ctx), token: 7, expiresAt: 0 });
    const [fire] = h.spans(SpanNames.fire);
    expect(fire?.events.map((e) => e.name)).toEqual([
      'fleetcron.lease.renewed',
      'fleetcron.lease.lost',
    ]);
    expect(fire?.events[0]?.attributes?.['fleetcron.lease.expires_at']).toBe(
      '2026-01-01T00:01:00.000Z',
    );
  });

  it('with retry first, keeps one span per fire; attemptMiddleware adds a child span per attempt', async () => {
    const { h, otel } = setup();
    let calls = 0;
    const seen: (string | undefined)[] = [];
    await compose([otel.middleware, retryThrice, otel.attemptMiddleware], () => {
      seen.push(trace.getActiveSpan()?.spanContext().spanId);
      calls++;
      if (calls < 3) throw new Error(`try ${calls}`);
    })(jobContext());

    const fires = h.spans(SpanNames.fire);
    const attempts = h.spans(SpanNames.attempt);
    expect(fires).toHaveLength(1);
    expect(fires[0]?.attributes[Attr.attempt]).toBe(3);
    expect(fires[0]?.attributes[Attr.runStatus]).toBe('succeeded');
    expect(attempts.map((s) => s.attributes[Attr.attempt])).toEqual([1, 2, 3]);
    expect(attempts.map((s) => s.attributes[Attr.runStatus])).toEqual([
      'failed',
      'failed',
      'succeeded',
    ]);
    expect(attempts.map((s) => s.status.code)).toEqual([
      SpanStatusCode.ERROR,
      SpanStatusCode.ERROR,
      SpanStatusCode.UNSET,
    ]);
    for (const attempt of attempts) {
      expect(attempt.parentSpanContext?.spanId).toBe(fires[0]?.spanContext().spanId);
    }
    // the job ran inside each attempt's span
    expect(seen).toEqual(attempts.map((s) => s.spanContext().spanId));
  });

  it('placed after retry, gives one fire span per attempt', async () => {
    const { h, otel } = setup();
    let calls = 0;
    await compose([retryThrice, otel.middleware], () => {
      if (++calls < 2) throw new Error('first try fails');
    })(jobContext());
    const fires = h.spans(SpanNames.fire);
    expect(fires.map((s) => s.attributes[Attr.attempt])).toEqual([1, 2]);
    expect(fires.map((s) => s.attributes[Attr.runStatus])).toEqual(['failed', 'succeeded']);
  });

  it('passes the (changed) context through to the job', async () => {
    const { otel } = setup();
    const got: JobContext[] = [];
    const ctx = jobContext();
    await compose([otel.middleware, otel.attemptMiddleware], (c) => {
      got.push(c);
    })(ctx);
    expect(got).toEqual([ctx]);
  });

  it('with traces: false, the middleware only passes through', async () => {
    const { h, otel } = setup({ traces: false });
    let ran = false;
    await compose([otel.middleware, otel.attemptMiddleware], () => {
      ran = true;
    })(jobContext());
    expect(ran).toBe(true);
    expect(h.spans()).toEqual([]);
  });
});

describe('losing claims', () => {
  it('emit no span by default', async () => {
    const { h } = setup();
    const ctx = jobContext();
    publish({
      type: 'claim.lost',
      ...about(ctx),
      backend: 'memory',
      reason: 'claimed',
      latencyMs: 1,
    });
    publish({ type: 'claim.busy', ...about(ctx), backend: 'memory', latencyMs: 1 });
    expect(h.spans()).toEqual([]);
  });

  it('emit a short fleetcron.claim span with losingSpans', async () => {
    const { h } = setup({ losingSpans: true });
    const ctx = jobContext();
    publish({
      type: 'claim.lost',
      ...about(ctx),
      backend: 'memory',
      reason: 'stale',
      latencyMs: 2,
    });
    publish({ type: 'claim.busy', ...about(ctx), backend: 'memory', latencyMs: 1 });
    publish({
      type: 'claim.failed',
      ...about(ctx),
      backend: 'redis',
      latencyMs: 5000,
      error: new Error('connect ECONNREFUSED'),
    });
    const claims = h.spans(SpanNames.claim);
    expect(claims.map((s) => s.attributes[Attr.claimResult])).toEqual(['lost', 'busy', 'failed']);
    expect(claims[0]?.attributes[Attr.claimLostReason]).toBe('stale');
    expect(claims[0]?.attributes[Attr.job]).toBe('billing');
    expect(claims[0]?.parentSpanContext).toBeUndefined();
    expect(claims[2]?.status.code).toBe(SpanStatusCode.ERROR);
    expect(claims[2]?.events.map((e) => e.name)).toEqual(['exception']);
    // the span covers the claim's round trip
    const [seconds, nanos] = claims[2]?.duration ?? [0, 0];
    expect(seconds * 1000 + nanos / 1e6).toBeCloseTo(5000, 0);
  });
});

describe('lifecycle', () => {
  it('stops listening after shutdown()', async () => {
    const { h, otel } = setup({ losingSpans: true });
    otel.shutdown();
    otel.shutdown();
    publish({
      type: 'claim.lost',
      ...about(jobContext()),
      backend: 'memory',
      reason: 'claimed',
      latencyMs: 1,
    });
    expect(h.spans()).toEqual([]);
  });

  it('keeps the claims it remembers bounded', () => {
    const h = otelHarness();
    cleanups.push(h.close);
    const tracing = new FireTracing(h.tracerProvider.getTracer('t'), {
      losingSpans: false,
      maxPendingFires: 10,
    });
    for (let i = 0; i < 5000; i++) {
      tracing.onEvent({
        type: 'claim.won',
        instanceId: 'i',
        job: 'j',
        fireAt: i,
        at: i,
        backend: 'memory',
        token: i,
        latencyMs: 1,
      });
    }
    expect(tracing.pending).toBe(10);
    tracing.onEvent({
      type: 'run.finished',
      instanceId: 'i',
      job: 'j',
      fireAt: 4999,
      at: 0,
      token: 1,
      status: 'succeeded',
      attempt: 1,
      durationMs: 1,
      error: null,
    });
    expect(tracing.pending).toBe(9);
  });

  it('rejects a bad maxPendingFires at construction', () => {
    expect(() => fleetcronOpenTelemetry({ maxPendingFires: 0 })).toThrow(InvalidOptionError);
    expect(() => fleetcronOpenTelemetry({ maxPendingFires: 0 })).toThrow(/maxPendingFires/);
  });
});
