import {
  compose,
  every,
  FakeClock,
  MemoryLock,
  MemoryStore,
  Scheduler,
  SchedulerStoppedError,
} from '@fleetcron/core';
import { SpanStatusCode } from '@opentelemetry/api';
import { afterEach, describe, expect, it } from 'vitest';
import { Attr, fleetcronOpenTelemetry, MetricNames, SpanNames } from '../src/index.js';
import { jobContext, otelHarness } from './otel-harness.js';

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function setup() {
  const h = otelHarness();
  const otel = fleetcronOpenTelemetry({
    tracerProvider: h.tracerProvider,
    meterProvider: h.meterProvider,
  });
  cleanups.push(h.close, () => otel.shutdown());
  return { h, otel };
}

/** Resolves when `signal` is aborted, with its reason. */
function aborted(signal: AbortSignal): Promise<unknown> {
  return new Promise((resolve) => signal.addEventListener('abort', () => resolve(signal.reason)));
}

describe('a run aborted by stop()', () => {
  it('is aborted on the span, whether the job rethrows the reason or returns', async () => {
    const { h, otel } = setup();
    const reason = new SchedulerStoppedError('run past the drain deadline of stop()');

    const rethrows = new AbortController();
    const run = compose([otel.middleware], async (ctx) => {
      throw await aborted(ctx.signal);
    })(jobContext({ signal: rethrows.signal }));
    rethrows.abort(reason);
    await expect(run).rejects.toBe(reason);

    const returns = new AbortController();
    returns.abort(reason);
    await compose([otel.middleware], () => {})(
      jobContext({ signal: returns.signal, fireAt: new Date(Date.UTC(2026, 0, 2)) }),
    );

    // a job that fails on its own while a foreign signal reason is set stays failed
    const other = new AbortController();
    other.abort(new Error('not ours'));
    await expect(
      compose([otel.middleware], () => {
        throw new Error('boom');
      })(jobContext({ signal: other.signal, fireAt: new Date(Date.UTC(2026, 0, 3)) })),
    ).rejects.toThrow('boom');

    const spans = h.spans(SpanNames.fire);
    expect(spans.map((s) => s.attributes[Attr.runStatus])).toEqual([
      'aborted',
      'aborted',
      'failed',
    ]);
    for (const span of spans.slice(0, 2)) {
      expect(span.attributes[Attr.errorType]).toBe('SCHEDULER_STOPPED');
      expect(span.status.code).toBe(SpanStatusCode.ERROR);
    }
  });

  it('with a real Scheduler: span, runs metric and history all say aborted', async () => {
    const { h, otel } = setup();
    const clock = new FakeClock();
    const store = new MemoryStore({ clock });
    const scheduler = new Scheduler({
      lock: new MemoryLock({ clock }),
      store,
      clock,
      instanceId: 'solo',
      middleware: [otel.middleware],
    });
    const started = new Set<string>();
    scheduler.add({
      name: 'obeys',
      trigger: every(1000),
      leaseMs: 60_000,
      run: async (ctx) => {
        started.add(ctx.job);
        throw await aborted(ctx.signal);
      },
    });
    scheduler.add({
      name: 'ignores',
      trigger: every(1000),
      leaseMs: 60_000,
      run: async (ctx) => {
        started.add(ctx.job);
        await aborted(ctx.signal); // then returns as if nothing happened
      },
    });
    scheduler.start();
    for (let i = 0; i < 100 && started.size < 2; i++) await clock.advance(100);
    expect([...started].sort()).toEqual(['ignores', 'obeys']);

    const stopped = scheduler.stop({ drainMs: 2000 });
    let done = false;
    void stopped.then(() => {
      done = true;
    });
    for (let i = 0; i < 100 && !done; i++) await clock.advance(100);
    await stopped;

    for (const job of ['obeys', 'ignores']) {
      const history = (await store.history(job)).executions;
      expect(
        history.map((e) => e.status),
        `${job}: history`,
      ).toEqual(['aborted']);
      expect(await h.sum(MetricNames.runs, { [Attr.job]: job, [Attr.runStatus]: 'aborted' })).toBe(
        1,
      );
      const spans = h.spans(SpanNames.fire).filter((s) => s.attributes[Attr.job] === job);
      expect(
        spans.map((s) => s.attributes[Attr.runStatus]),
        `${job}: span`,
      ).toEqual(['aborted']);
    }
    expect(await h.sum(MetricNames.runs, { [Attr.runStatus]: 'failed' })).toBe(0);
  });
});
