import type { FleetcronEvent } from '@fleetcron/core';
import { afterEach, describe, expect, it } from 'vitest';
import { Attr, fleetcronOpenTelemetry, MetricNames } from '../src/index.js';
import { otelHarness, publish } from './otel-harness.js';

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('leader mode metric', () => {
  it('fleetcron.leader is 1 while this process leads an election, 0 after the term is lost', async () => {
    const h = otelHarness();
    const otel = fleetcronOpenTelemetry({
      tracerProvider: h.tracerProvider,
      meterProvider: h.meterProvider,
    });
    cleanups.push(h.close, () => otel.shutdown());
    const changed = (isLeader: boolean, term: number, election = 'fleetcron'): FleetcronEvent => ({
      type: 'leader.changed',
      ...{ instanceId: 'i-1', at: 1_000, election, isLeader, term },
    });
    publish(changed(true, 1));
    publish(changed(true, 4, 'billing'));
    expect(await h.sum(MetricNames.leader, { [Attr.election]: 'fleetcron' })).toBe(1);
    expect(await h.sum(MetricNames.leader)).toBe(2);
    publish(changed(false, 1));
    expect(await h.sum(MetricNames.leader, { [Attr.election]: 'fleetcron' })).toBe(0);
    expect(await h.sum(MetricNames.leader, { [Attr.election]: 'billing' })).toBe(1);
  });
});
