import type { FleetcronEvent, JobContext, Middleware } from '@fleetcron/core';
import {
  type Attributes,
  type Context,
  context,
  createContextKey,
  type Span,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  trace,
} from '@opentelemetry/api';
import { BoundedMap, fireKey } from './bounded-map.js';
import { Attr, SpanNames } from './names.js';
import { errorType, type RunOutcome, runOutcome } from './outcome.js';

/** What the `claim.won` event told us about a fire, kept until its run starts. */
interface ClaimInfo {
  backend: string;
  latencyMs: number;
}

/** The fire span in progress, found by `attemptMiddleware` through the OpenTelemetry context. */
interface ActiveFire {
  key: string;
  span: Span;
  attempt: number;
}

const ACTIVE_FIRE = createContextKey('fleetcron.active_fire');

/** Options of {@link FireTracing}. */
export interface FireTracingOptions {
  /** Also emit a short `fleetcron.claim` span for claims this instance did not win. */
  losingSpans: boolean;
  /** Claims remembered between `claim.won` and the run's start (oldest dropped first). */
  maxPendingFires: number;
}

/**
 * The tracing half of the exporter: a middleware that runs each fire inside a `fleetcron.fire`
 * span, and an event handler that feeds it the claim's backend and latency (from `claim.won`),
 * adds lease events to the running span and, optionally, records losing claims.
 */
export class FireTracing {
  readonly #tracer: Tracer;
  readonly #options: FireTracingOptions;
  readonly #claims: BoundedMap<string, ClaimInfo>;
  readonly #running: BoundedMap<string, Span>;

  constructor(tracer: Tracer, options: FireTracingOptions) {
    this.#tracer = tracer;
    this.#options = options;
    this.#claims = new BoundedMap(options.maxPendingFires);
    this.#running = new BoundedMap(options.maxPendingFires);
  }

  /** Claims and running spans currently remembered (for tests: stays bounded). */
  get pending(): number {
    return this.#claims.size + this.#running.size;
  }

  /** The fire-span middleware: place it first in the chain for one span per fire. */
  readonly middleware: Middleware = (ctx, next) => {
    const key = fireKey(ctx.instanceId, ctx.job, ctx.fireAt.getTime(), ctx.shard);
    const claim = this.#claims.get(key);
    const attributes: Attributes = {
      [Attr.job]: ctx.job,
      [Attr.fireScheduledTime]: ctx.fireAt.toISOString(),
      [Attr.fireLagMs]: ctx.startedAt.getTime() - ctx.fireAt.getTime(),
      [Attr.instanceId]: ctx.instanceId,
      [Attr.fencingToken]: ctx.token,
      [Attr.attempt]: ctx.attempt,
      [Attr.claimResult]: 'won',
    };
    if (claim) {
      attributes[Attr.lockBackend] = claim.backend;
      attributes[Attr.claimDurationMs] = claim.latencyMs;
    }
    // A fire starts a trace of its own: the scheduler's timers may carry whatever context was
    // active when it started, and one trace per fire is what a reader expects.
    const span = this.#tracer.startSpan(SpanNames.fire, {
      kind: SpanKind.INTERNAL,
      root: true,
      attributes,
    });
    const active: ActiveFire = { key, span, attempt: ctx.attempt };
    this.#running.set(key, span);
    const spanContext = trace.setSpan(context.active(), span).setValue(ACTIVE_FIRE, active);
    return this.#runInSpan(span, spanContext, ctx, next, () => {
      span.setAttribute(Attr.attempt, active.attempt);
      if (this.#running.get(key) === span) this.#running.delete(key);
    });
  };

  /**
   * The attempt middleware: place it after `retry()` to get a `fleetcron.attempt` child span
   * per attempt; it also keeps the fire span's `fleetcron.attempt` at the last attempt.
   */
  readonly attemptMiddleware: Middleware = (ctx, next) => {
    const parent = context.active();
    const fire = parent.getValue(ACTIVE_FIRE) as ActiveFire | undefined;
    const key = fireKey(ctx.instanceId, ctx.job, ctx.fireAt.getTime(), ctx.shard);
    const sameFire = fire !== undefined && fire.key === key;
    if (sameFire) fire.attempt = Math.max(fire.attempt, ctx.attempt);
    const span = this.#tracer.startSpan(
      SpanNames.attempt,
      {
        kind: SpanKind.INTERNAL,
        attributes: {
          [Attr.job]: ctx.job,
          [Attr.fireScheduledTime]: ctx.fireAt.toISOString(),
          [Attr.instanceId]: ctx.instanceId,
          [Attr.fencingToken]: ctx.token,
          [Attr.attempt]: ctx.attempt,
        },
      },
      parent,
    );
    return this.#runInSpan(span, trace.setSpan(parent, span), ctx, next, () => {});
  };

  async #runInSpan(
    span: Span,
    spanContext: Context,
    ctx: JobContext,
    next: (ctx?: JobContext) => Promise<void>,
    onEnd: () => void,
  ): Promise<void> {
    let thrown: { value: unknown } | null = null;
    try {
      await context.with(spanContext, () => next());
    } catch (value) {
      thrown = { value };
      throw value;
    } finally {
      onEnd();
      endWith(span, runOutcome(thrown, ctx.signal));
    }
  }

  /** Handles a lifecycle event (subscribe it to the fleetcron channel). */
  onEvent(event: FleetcronEvent): void {
    switch (event.type) {
      case 'claim.won':
        this.#claims.set(fireKey(event.instanceId, event.job, event.fireAt, event.shard), {
          backend: event.backend,
          latencyMs: event.latencyMs,
        });
        return;
      case 'lease.renewed':
        this.#running
          .get(fireKey(event.instanceId, event.job, event.fireAt, event.shard))
          ?.addEvent('fleetcron.lease.renewed', {
            'fleetcron.lease.expires_at': new Date(event.expiresAt).toISOString(),
          });
        return;
      case 'lease.lost':
        this.#running
          .get(fireKey(event.instanceId, event.job, event.fireAt, event.shard))
          ?.addEvent(
            'fleetcron.lease.lost',
            event.error ? { [Attr.errorType]: errorType(event.error) } : {},
          );
        return;
      case 'run.finished':
      case 'fire.skipped':
        this.#claims.delete(fireKey(event.instanceId, event.job, event.fireAt, event.shard));
        return;
      case 'claim.lost':
      case 'claim.busy':
      case 'claim.failed':
        if (this.#options.losingSpans) this.#losingSpan(event);
        return;
      default:
        return;
    }
  }

  #losingSpan(
    event: Extract<FleetcronEvent, { type: 'claim.lost' | 'claim.busy' | 'claim.failed' }>,
  ): void {
    const result = event.type.slice('claim.'.length);
    const attributes: Attributes = {
      [Attr.job]: event.job,
      [Attr.fireScheduledTime]: new Date(event.fireAt).toISOString(),
      [Attr.instanceId]: event.instanceId,
      [Attr.lockBackend]: event.backend,
      [Attr.claimResult]: result,
      [Attr.claimDurationMs]: event.latencyMs,
    };
    if (event.type === 'claim.lost') attributes[Attr.claimLostReason] = event.reason;
    const end = Date.now();
    const span = this.#tracer.startSpan(SpanNames.claim, {
      kind: SpanKind.INTERNAL,
      root: true,
      startTime: end - event.latencyMs,
      attributes,
    });
    if (event.type === 'claim.failed') {
      span.recordException(event.error);
      span.setAttribute(Attr.errorType, errorType(event.error));
      span.setStatus({ code: SpanStatusCode.ERROR, message: event.error.message });
    }
    span.end(end);
  }

  /** Forgets everything remembered (after unsubscribing). */
  clear(): void {
    this.#claims.clear();
    this.#running.clear();
  }
}

function endWith(span: Span, outcome: RunOutcome): void {
  span.setAttribute(Attr.runStatus, outcome.status);
  if (outcome.error) {
    span.recordException(outcome.error);
    span.setAttribute(Attr.errorType, errorType(outcome.error));
    span.setStatus({ code: SpanStatusCode.ERROR, message: outcome.error.message });
  }
  span.end();
}
