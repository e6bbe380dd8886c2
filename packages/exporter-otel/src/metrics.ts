import type { FleetcronEvent } from '@fleetcron/core';
import type { Counter, Histogram, Meter, UpDownCounter } from '@opentelemetry/api';
import { BoundedMap, fireKey } from './bounded-map.js';
import { ClockMetrics } from './clock-metrics.js';
import { LastSuccessMetrics } from './last-success-metrics.js';
import { Attr, MetricNames } from './names.js';

/** Bucket boundaries (seconds) for claim round trips: 1 ms to 10 s. */
export const CLAIM_DURATION_BUCKETS = [
  0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
];
/** Bucket boundaries (seconds) for run durations: 10 ms to 1 h. */
export const RUN_DURATION_BUCKETS = [
  0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600,
];
/** Bucket boundaries (seconds) for fire lag: 1 ms to 5 min. */
export const FIRE_LAG_BUCKETS = [
  0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300,
];

/** Run statuses created at 0 per job for the alert rules (`succeeded` too, for ratios). */
export const ALERTING_STATUSES = ['succeeded', 'failed', 'timed_out', 'lease_lost'] as const;
/** Skip reasons created at 0 per job: the ones the `FleetcronFiresMissed` rule watches. */
export const ALERTING_SKIP_REASONS = ['missed', 'backend_unavailable', 'lease_expired'] as const;

/**
 * The metrics half of the exporter: instruments created once on `meter`, fed by lifecycle
 * events only (so they count every run whatever the middleware order).
 */
export class FireMetrics {
  readonly #runs: Counter;
  readonly #active: UpDownCounter;
  readonly #runDuration: Histogram;
  readonly #claimDuration: Histogram;
  readonly #fireLag: Histogram;
  readonly #missed: Counter;
  readonly #skipped: Counter;
  readonly #leaseLost: Counter;
  readonly #storeErrors: Counter;
  readonly #early: Counter;
  readonly #leader: UpDownCounter;
  readonly #clock: ClockMetrics;
  readonly #lastSuccess: LastSuccessMetrics;
  readonly #deliveryFailed: Counter;
  readonly #pruned: Counter;
  /** Jobs whose alerting counters were created at zero (see {@link FireMetrics.#zeroCounters}). */
  readonly #zeroed: BoundedMap<string, true>;
  /** Runs counted in `runs.active`, so a `run.finished` without `run.started` is not subtracted. */
  readonly #started: BoundedMap<string, true>;

  constructor(meter: Meter, maxPendingFires = 1024) {
    this.#started = new BoundedMap(maxPendingFires);
    this.#zeroed = new BoundedMap(maxPendingFires);
    this.#runs = meter.createCounter(MetricNames.runs, {
      description: 'Finished runs of fleetcron jobs on this instance, by job and status.',
      unit: '{run}',
    });
    this.#active = meter.createUpDownCounter(MetricNames.runsActive, {
      description: 'Runs of fleetcron jobs in progress on this instance.',
      unit: '{run}',
    });
    this.#runDuration = meter.createHistogram(MetricNames.runDuration, {
      description: 'Duration of fleetcron job runs, middleware and retries included.',
      unit: 's',
      advice: { explicitBucketBoundaries: RUN_DURATION_BUCKETS },
    });
    this.#claimDuration = meter.createHistogram(MetricNames.claimDuration, {
      description: 'Round trip of fleetcron fire claims to the lock backend, by result.',
      unit: 's',
      advice: { explicitBucketBoundaries: CLAIM_DURATION_BUCKETS },
    });
    this.#fireLag = meter.createHistogram(MetricNames.fireLag, {
      description: 'Start of a fleetcron run minus its scheduled time.',
      unit: 's',
      advice: { explicitBucketBoundaries: FIRE_LAG_BUCKETS },
    });
    this.#missed = meter.createCounter(MetricNames.fireMissed, {
      description:
        'Fires whose time passed while the process could not act (blocked loop, suspend).',
      unit: '{fire}',
    });
    this.#skipped = meter.createCounter(MetricNames.fireSkipped, {
      description: 'Fires the claiming instance did not run, by reason.',
      unit: '{fire}',
    });
    this.#leaseLost = meter.createCounter(MetricNames.leaseLost, {
      description: 'Leases lost while their job ran (the job was aborted).',
      unit: '{lease}',
    });
    this.#storeErrors = meter.createCounter(MetricNames.storeErrors, {
      description: 'Execution history writes that failed (the runs were not affected).',
      unit: '{error}',
    });
    this.#early = meter.createCounter(MetricNames.fireEarly, {
      description:
        "Runs that started before their scheduled time by the fleet's (backend's) clock.",
      unit: '{run}',
    });
    this.#leader = meter.createUpDownCounter(MetricNames.leader, {
      description: 'Leader mode: schedulers of this process that lead their election.',
      unit: '{leader}',
    });
    this.#clock = new ClockMetrics(meter);
    this.#lastSuccess = new LastSuccessMetrics(meter);
    this.#pruned = meter.createCounter(MetricNames.historyPruned, {
      description:
        'History rows deleted by the retention job, by why its run stopped (done, budget, signal).',
      unit: '{execution}',
    });
    this.#deliveryFailed = meter.createCounter(MetricNames.alertDeliveryFailed, {
      description: 'Failed alert delivery attempts, by notifier and whether the delivery gave up.',
      unit: '{attempt}',
    });
  }

  /** Handles a lifecycle event (subscribe it to the fleetcron channel). */
  onEvent(event: FleetcronEvent): void {
    switch (event.type) {
      case 'fire.scheduled':
        this.#zeroCounters(event.job);
        return;
      case 'claim.won':
      case 'claim.busy':
      case 'claim.failed':
        this.#claimDuration.record(event.latencyMs / 1000, {
          [Attr.lockBackend]: event.backend,
          [Attr.claimResult]: event.type.slice('claim.'.length),
        });
        return;
      case 'claim.lost':
        this.#claimDuration.record(event.latencyMs / 1000, {
          [Attr.lockBackend]: event.backend,
          [Attr.claimResult]: 'lost',
          [Attr.claimLostReason]: event.reason,
        });
        return;
      case 'run.started':
        this.#started.set(fireKey(event.instanceId, event.job, event.fireAt, event.shard), true);
        this.#active.add(1, { [Attr.job]: event.job });
        // lag is on the fleet's clock; a run that started early is counted, not hidden as 0
        this.#fireLag.record(Math.max(0, event.lagMs) / 1000, { [Attr.job]: event.job });
        if (event.lagMs < 0) this.#early.add(1, { [Attr.job]: event.job });
        return;
      case 'run.finished': {
        const attributes = { [Attr.job]: event.job, [Attr.runStatus]: event.status };
        // the scheduler may finish a run it never started (lease lost during the claim)
        if (this.#started.delete(fireKey(event.instanceId, event.job, event.fireAt, event.shard))) {
          this.#active.add(-1, { [Attr.job]: event.job });
        }
        this.#runs.add(1, attributes);
        this.#runDuration.record(event.durationMs / 1000, attributes);
        this.#lastSuccess.onRunFinished(event);
        return;
      }
      case 'fire.missed':
        this.#missed.add(1, { [Attr.job]: event.job });
        return;
      case 'fire.skipped':
        this.#skipped.add(1, { [Attr.job]: event.job, [Attr.skipReason]: event.reason });
        return;
      case 'lease.lost':
        this.#leaseLost.add(1, { [Attr.job]: event.job });
        return;
      case 'store.failed':
        this.#storeErrors.add(1, { [Attr.job]: event.job });
        return;
      case 'clock.offset':
        this.#clock.onClockOffset(event);
        return;
      case 'alert.delivery_failed':
        this.#deliveryFailed.add(1, {
          [Attr.notifier]: event.notifier,
          [Attr.gaveUp]: event.retryInMs === null,
        });
        return;
      case 'history.pruned':
        this.#pruned.add(event.deleted, { [Attr.prunedStoppedBy]: event.stoppedBy });
        return;
      case 'leader.changed':
        this.#leader.add(event.isLeader ? 1 : -1, { [Attr.election]: event.election });
        return;
      default:
        return;
    }
  }

  /**
   * Creates the series alert rules watch at 0 the first time a job is scheduled, so that
   * Prometheus's `increase()` sees the first failure after a process start (a series that
   * appears with the value 1 has no increase).
   */
  #zeroCounters(job: string): void {
    if (this.#zeroed.get(job)) return;
    this.#zeroed.set(job, true);
    const attributes = { [Attr.job]: job };
    for (const status of ALERTING_STATUSES) {
      this.#runs.add(0, { ...attributes, [Attr.runStatus]: status });
    }
    for (const reason of ALERTING_SKIP_REASONS) {
      this.#skipped.add(0, { ...attributes, [Attr.skipReason]: reason });
    }
    this.#missed.add(0, attributes);
    this.#leaseLost.add(0, attributes);
    this.#storeErrors.add(0, attributes);
  }

  /** Forgets the runs in progress (after unsubscribing). */
  clear(): void {
    this.#started.clear();
    this.#zeroed.clear();
    this.#clock.clear();
    this.#lastSuccess.clear();
  }
}
