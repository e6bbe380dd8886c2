import type { FleetcronEvent } from '@fleetcron/core';
import type { Meter, ObservableGauge, ObservableResult } from '@opentelemetry/api';
import { BoundedMap } from './bounded-map.js';
import { Attr, MetricNames } from './names.js';

type ClockEvent = Extract<FleetcronEvent, { type: 'clock.offset' }>;

/**
 * The fleet-clock half of the metrics: two gauges, each instance's estimated offset from the lock
 * backend's clock and the round trip it rests on, from the latest `clock.offset` event of every
 * scheduler in the process (bounded to `maxInstances`).
 */
export class ClockMetrics {
  readonly #latest: BoundedMap<string, ClockEvent>;
  readonly #offset: ObservableGauge;
  readonly #rtt: ObservableGauge;
  readonly #observeOffset = (result: ObservableResult) => this.#observe(result, 'offset');
  readonly #observeRtt = (result: ObservableResult) => this.#observe(result, 'rtt');

  constructor(meter: Meter, maxInstances = 64) {
    this.#latest = new BoundedMap(maxInstances);
    this.#offset = meter.createObservableGauge(MetricNames.clockOffset, {
      description:
        "Estimated offset of this instance's clock from the lock backend's clock (backend minus local).",
      unit: 's',
    });
    this.#rtt = meter.createObservableGauge(MetricNames.clockRtt, {
      description: 'Round trip of the backend answer the clock offset estimate rests on.',
      unit: 's',
    });
    this.#offset.addCallback(this.#observeOffset);
    this.#rtt.addCallback(this.#observeRtt);
  }

  /** Keeps the latest estimate of the event's instance. */
  onClockOffset(event: ClockEvent): void {
    this.#latest.set(event.instanceId, event);
  }

  /** Stops observing and forgets the estimates. */
  clear(): void {
    this.#offset.removeCallback(this.#observeOffset);
    this.#rtt.removeCallback(this.#observeRtt);
    this.#latest.clear();
  }

  #observe(result: ObservableResult, what: 'offset' | 'rtt'): void {
    for (const [instanceId, event] of this.#latest.entries()) {
      const ms = what === 'offset' ? event.offsetMs : event.rttMs;
      result.observe(ms / 1000, {
        [Attr.instanceId]: instanceId,
        [Attr.lockBackend]: event.backend,
      });
    }
  }
}
