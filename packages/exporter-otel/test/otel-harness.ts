import { channel } from 'node:diagnostics_channel';
import type { FleetcronEvent, JobContext } from '@fleetcron/core';
import { EVENTS_CHANNEL, FakeClock, silentLogger } from '@fleetcron/core';
import { context } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  type DataPoint,
  type Histogram,
  MeterProvider,
  type MetricData,
  MetricReader,
} from '@opentelemetry/sdk-metrics';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';

/**
 * Publishes `event` on the `EVENTS_CHANNEL` diagnostics channel, as a scheduler does (core's own
 * `publish` is internal; any code in the process can publish on the channel by its name).
 */
export function publish(event: FleetcronEvent): void {
  channel(EVENTS_CHANNEL).publish(event);
}

/** A reader the test collects from on demand. */
class ManualReader extends MetricReader {
  protected override async onForceFlush(): Promise<void> {}
  protected override async onShutdown(): Promise<void> {}
}

let contextManagerSet = false;

/** Real OpenTelemetry SDK providers with in-memory exporters. */
export function otelHarness() {
  if (!contextManagerSet) {
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    contextManagerSet = true;
  }
  const spanExporter = new InMemorySpanExporter();
  const tracerProvider = new BasicTracerProvider({
    spanProcessors: [new SimpleSpanProcessor(spanExporter)],
  });
  const reader = new ManualReader();
  const meterProvider = new MeterProvider({ readers: [reader] });

  const spans = (name?: string): ReadableSpan[] =>
    spanExporter.getFinishedSpans().filter((s) => name === undefined || s.name === name);

  const collect = async (): Promise<Map<string, MetricData>> => {
    const { resourceMetrics, errors } = await reader.collect();
    if (errors.length > 0) throw errors[0];
    const byName = new Map<string, MetricData>();
    for (const scope of resourceMetrics.scopeMetrics) {
      for (const metric of scope.metrics) byName.set(metric.descriptor.name, metric);
    }
    return byName;
  };

  /** Sum of a counter's points whose attributes include `match`. */
  const sum = async (name: string, match: Record<string, unknown> = {}): Promise<number> => {
    const metric = (await collect()).get(name);
    if (!metric) return 0;
    return (metric.dataPoints as DataPoint<number>[])
      .filter((p) => matches(p.attributes, match))
      .reduce((total, p) => total + p.value, 0);
  };

  /** Count and sum of a histogram's points whose attributes include `match`. */
  const histogram = async (
    name: string,
    match: Record<string, unknown> = {},
  ): Promise<{ count: number; sum: number; points: DataPoint<Histogram>[] }> => {
    const metric = (await collect()).get(name);
    const points = ((metric?.dataPoints ?? []) as DataPoint<Histogram>[]).filter((p) =>
      matches(p.attributes, match),
    );
    return {
      count: points.reduce((n, p) => n + p.value.count, 0),
      sum: points.reduce((n, p) => n + (p.value.sum ?? 0), 0),
      points,
    };
  };

  const close = async () => {
    await tracerProvider.shutdown();
    await meterProvider.shutdown();
  };

  return { tracerProvider, meterProvider, spanExporter, spans, collect, sum, histogram, close };
}

function matches(attributes: Record<string, unknown>, match: Record<string, unknown>): boolean {
  return Object.entries(match).every(([k, v]) => attributes[k] === v);
}

/** A job context as the scheduler would build it. */
export function jobContext(overrides: Partial<JobContext> = {}): JobContext {
  const fireAt = overrides.fireAt ?? new Date(Date.UTC(2026, 0, 1, 0, 0, 0));
  return {
    job: 'billing',
    fireAt,
    startedAt: new Date(fireAt.getTime() + 42),
    instanceId: 'i-1',
    attempt: 1,
    token: 7,
    lease: { token: overrides.token ?? 7, remainingMs: () => 30_000, assertValid: () => {} },
    signal: new AbortController().signal,
    log: silentLogger,
    clock: new FakeClock(fireAt),
    ...overrides,
  };
}

/** Base fields of an event about `ctx`'s fire. */
export function about(ctx: JobContext): {
  instanceId: string;
  job: string;
  fireAt: number;
  at: number;
} {
  return {
    instanceId: ctx.instanceId,
    job: ctx.job,
    fireAt: ctx.fireAt.getTime(),
    at: ctx.startedAt.getTime(),
  };
}
