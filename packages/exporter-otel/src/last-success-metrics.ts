import type { FleetcronEvent } from '@fleetcron/core';
import type { Meter, ObservableGauge, ObservableResult } from '@opentelemetry/api';
import { BoundedMap } from './bounded-map.js';
import { Attr, MetricNames } from './names.js';

type FinishedEvent = Extract<FleetcronEvent, { type: 'run.finished' }>;

/**
 * The dead-man's-switch gauge: when each job last succeeded on this instance (the end of its last
 * `succeeded` run, epoch seconds), for alert rules such as "no success of `export` for 26 h".
 * One series per job (bounded to `maxJobs`); a job that never succeeded here has none.
 */
export class LastSuccessMetrics {
  readonly #latest: BoundedMap<string, number>;
  readonly #gauge: ObservableGauge;
  readonly #observe = (result: ObservableResult) => {
    for (const [job, at] of this.#latest.entries()) result.observe(at / 1000, { [Attr.job]: job });
  };

  constructor(meter: Meter, maxJobs = 1024) {
    this.#latest = new BoundedMap(maxJobs);
    this.#gauge = meter.createObservableGauge(MetricNames.lastSuccess, {
      description: 'When each job last succeeded on this instance, epoch seconds.',
      unit: 's',
    });
    this.#gauge.addCallback(this.#observe);
  }

  /** Records the run's end when it succeeded. */
  onRunFinished(event: FinishedEvent): void {
    if (event.status !== 'succeeded') return;
    const previous = this.#latest.get(event.job);
    if (previous === undefined || event.at >= previous) this.#latest.set(event.job, event.at);
  }

  /** Stops observing and forgets the times. */
  clear(): void {
    this.#gauge.removeCallback(this.#observe);
    this.#latest.clear();
  }
}
