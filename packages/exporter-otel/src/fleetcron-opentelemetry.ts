import { InvalidOptionError, type Middleware, subscribe } from '@fleetcron/core';
import { type MeterProvider, metrics, type TracerProvider, trace } from '@opentelemetry/api';
import { FireMetrics } from './metrics.js';
import { INSTRUMENTATION_SCOPE, INSTRUMENTATION_VERSION } from './names.js';
import { FireTracing } from './tracing.js';

/** Options of {@link fleetcronOpenTelemetry}. */
export interface FleetcronOpenTelemetryOptions {
  /** Where spans go. Default: the global provider (`trace.getTracerProvider()`). */
  tracerProvider?: TracerProvider;
  /** Where metrics go. Default: the global provider (`metrics.getMeterProvider()`). */
  meterProvider?: MeterProvider;
  /** Emit spans (the middleware is a pass-through when `false`). Default `true`. */
  traces?: boolean;
  /** Record metrics from lifecycle events. Default `true`. */
  metrics?: boolean;
  /**
   * Also emit a short root span `fleetcron.claim` on instances that did not win a fire
   * (`lost`, `busy`, `failed` claims). Default `false`: in a fleet of N instances it is N-1
   * spans per fire.
   */
  losingSpans?: boolean;
  /**
   * Bound on the per-fire state kept between events: won claims waiting for their run (the fire
   * span reads the claim's backend and latency from them), running spans, runs in progress.
   * Oldest dropped first. Default 1024.
   */
  maxPendingFires?: number;
}

/** What {@link fleetcronOpenTelemetry} returns. */
export interface FleetcronOpenTelemetry {
  /**
   * Runs each fire inside a `fleetcron.fire` span, so spans the job creates are its children.
   * Put it first in the scheduler's `middleware` for one span per fire (retries included).
   */
  readonly middleware: Middleware;
  /**
   * Optional: put it after `retry()` to get one `fleetcron.attempt` child span per attempt.
   * It also keeps the fire span's `fleetcron.attempt` attribute at the last attempt.
   */
  readonly attemptMiddleware: Middleware;
  /**
   * Unsubscribes from the lifecycle events and forgets pending claims. Idempotent. Does not
   * shut the providers down (they are yours).
   */
  shutdown(): void;
}

const passThrough: Middleware = (_ctx, next) => next();

/**
 * OpenTelemetry traces and metrics for fleetcron. Subscribes to the lifecycle events published
 * on `node:diagnostics_channel` (every scheduler in the process) for metrics, and returns the
 * middleware that creates the fire spans. Create it after your OpenTelemetry SDK is set up
 * when you rely on the global providers.
 *
 * @example
 * const otel = fleetcronOpenTelemetry();
 * const scheduler = new Scheduler({ lock, middleware: [otel.middleware, retry({ attempts: 3 })] });
 * // on shutdown: await scheduler.stop(); otel.shutdown();
 */
export function fleetcronOpenTelemetry(
  options: FleetcronOpenTelemetryOptions = {},
): FleetcronOpenTelemetry {
  const maxPendingFires = options.maxPendingFires ?? 1024;
  if (!Number.isInteger(maxPendingFires) || maxPendingFires < 1) {
    throw new InvalidOptionError('maxPendingFires', 'must be a positive integer');
  }
  const tracing =
    options.traces === false
      ? null
      : new FireTracing(
          (options.tracerProvider ?? trace.getTracerProvider()).getTracer(
            INSTRUMENTATION_SCOPE,
            INSTRUMENTATION_VERSION,
          ),
          { losingSpans: options.losingSpans ?? false, maxPendingFires },
        );
  const fireMetrics =
    options.metrics === false
      ? null
      : new FireMetrics(
          (options.meterProvider ?? metrics.getMeterProvider()).getMeter(
            INSTRUMENTATION_SCOPE,
            INSTRUMENTATION_VERSION,
          ),
          maxPendingFires,
        );
  let unsubscribe: (() => void) | null =
    tracing || fireMetrics
      ? subscribe((event) => {
          // each half guards itself: a failing metric must not cost the span its claim data
          try {
            tracing?.onEvent(event);
          } finally {
            fireMetrics?.onEvent(event);
          }
        })
      : null;
  return {
    middleware: tracing ? tracing.middleware : passThrough,
    attemptMiddleware: tracing ? tracing.attemptMiddleware : passThrough,
    shutdown() {
      unsubscribe?.();
      unsubscribe = null;
      tracing?.clear();
      fireMetrics?.clear();
    },
  };
}
