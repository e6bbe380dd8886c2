import { compose } from '@fleetcron/core';
import { metrics, trace } from '@opentelemetry/api';
import { afterAll, describe, expect, it } from 'vitest';
import { fleetcronOpenTelemetry, MetricNames, SpanNames } from '../src/index.js';
import { jobContext, otelHarness, publish } from './otel-harness.js';

describe('global providers', () => {
  const h = otelHarness();
  trace.setGlobalTracerProvider(h.tracerProvider);
  metrics.setGlobalMeterProvider(h.meterProvider);
  const otel = fleetcronOpenTelemetry();
  afterAll(async () => {
    otel.shutdown();
    trace.disable();
    metrics.disable();
    await h.close();
  });

  it('are used when none are passed', async () => {
    const ctx = jobContext();
    await compose([otel.middleware], () => {
      trace.getTracer('app').startSpan('inside').end();
    })(ctx);
    publish({
      type: 'run.finished',
      instanceId: ctx.instanceId,
      job: ctx.job,
      fireAt: ctx.fireAt.getTime(),
      at: 0,
      token: 1,
      status: 'succeeded',
      attempt: 1,
      durationMs: 5,
      error: null,
    });
    const [fire] = h.spans(SpanNames.fire);
    const [inside] = h.spans('inside');
    expect(inside?.parentSpanContext?.spanId).toBe(fire?.spanContext().spanId);
    expect(await h.sum(MetricNames.runs)).toBe(1);
  });
});
