import { describe, expect, it } from 'vitest';
import { ClockOffsetEstimator, fleetClock } from '../../src/backend.js';
import { type Clock, FakeClock, offsetClock } from '../../src/index.js';

/**
 * A local instance whose wall clock is `skewMs` off the backend's (the FakeClock is the true
 * time; the backend's clock reads it exactly). One request: `outMs` to reach the backend,
 * `backMs` to come back.
 */
function setup(skewMs: number) {
  const fake = new FakeClock(Date.UTC(2026, 0, 1));
  const local = offsetClock(fake, skewMs);
  const estimator = new ClockOffsetEstimator(local);
  let backend: Clock = fake;
  const roundTrip = async (outMs: number, backMs: number) => {
    const sentMono = local.monotonic();
    await fake.advance(outMs);
    const backendTime = backend.now();
    await fake.advance(backMs);
    return estimator.record({ sentMono, receivedMono: local.monotonic(), backendTime });
  };
  const restartBackend = (clockOffsetMs: number) => {
    backend = offsetClock(fake, clockOffsetMs);
  };
  return { fake, local, estimator, roundTrip, restartBackend };
}

describe('ClockOffsetEstimator', () => {
  it('with no samples: no estimate, and the corrected clock is the local clock', () => {
    const { local, estimator } = setup(3_000);
    expect(estimator.estimate()).toBeNull();
    expect(estimator.now()).toBe(local.now());
    expect(fleetClock(local, estimator).now()).toBe(local.now());
  });

  it('estimates the offset of a clock 3 s fast within half the round trip, and corrects it', async () => {
    const { fake, estimator, roundTrip } = setup(3_000);
    expect(await roundTrip(10, 10)).toBe(true);
    const estimate = estimator.estimate()!;
    expect(estimate.rttMs).toBe(20);
    expect(Math.abs(estimate.offsetMs - -3_000)).toBeLessThanOrEqual(estimate.boundMs);
    expect(Math.abs(estimator.now() - fake.now())).toBeLessThanOrEqual(estimate.boundMs);
  });

  it('asymmetric delays: the error stays within the bound, and the smallest round trip wins', async () => {
    const { fake, estimator, roundTrip } = setup(-2_000);
    await roundTrip(180, 20); // asymmetric and slow: error up to 80 ms
    const slow = estimator.estimate()!;
    expect(slow.rttMs).toBe(200);
    expect(Math.abs(slow.offsetMs - 2_000)).toBeGreaterThan(50); // the asymmetry shows...
    expect(Math.abs(slow.offsetMs - 2_000)).toBeLessThanOrEqual(slow.boundMs); // ...bounded
    await roundTrip(3, 1); // a fast sample replaces it
    const fast = estimator.estimate()!;
    expect(fast.rttMs).toBe(4);
    expect(Math.abs(fast.offsetMs - 2_000)).toBeLessThanOrEqual(fast.boundMs);
    expect(fast.boundMs).toBeLessThan(5);
    await roundTrip(300, 10); // a later slow sample does not displace the fast one
    expect(estimator.estimate()!.rttMs).toBe(4);
    expect(Math.abs(estimator.now() - fake.now())).toBeLessThanOrEqual(5);
  });

  it('keeps only the last samples: an old fast sample ages out', async () => {
    const fake = new FakeClock(0);
    const estimator = new ClockOffsetEstimator(fake, { maxSamples: 3 });
    const sample = (rtt: number) => {
      const sentMono = fake.monotonic();
      fake.freeze(rtt);
      estimator.record({ sentMono, receivedMono: fake.monotonic(), backendTime: fake.now() });
    };
    sample(2);
    sample(50);
    sample(60);
    expect(estimator.estimate()!.rttMs).toBe(2);
    sample(70); // the 2 ms sample is now the 4th newest
    expect(estimator.estimate()).toMatchObject({ rttMs: 50, samples: 3 });
  });

  it('a local clock jump moves the reported offset at once; the corrected clock does not jump', async () => {
    const { fake, local, estimator, roundTrip } = setup(0);
    await roundTrip(5, 5);
    const before = estimator.now();
    fake.jump(7_000); // an NTP step of the local wall clock, monotonic time unchanged
    expect(local.now() - fake.monotonic()).toBeGreaterThan(before - fake.monotonic() + 6_000);
    expect(estimator.now()).toBe(before); // still the backend's time
    const estimate = estimator.estimate()!;
    expect(Math.abs(estimate.offsetMs - -7_000)).toBeLessThanOrEqual(estimate.boundMs);
  });

  it('a backend restart with another clock: a contradicting sample replaces the old ones', async () => {
    const { fake, estimator, roundTrip, restartBackend } = setup(0);
    await roundTrip(1, 1);
    await roundTrip(2, 2);
    expect(estimator.estimate()!.samples).toBe(2);
    restartBackend(4_000); // failover to a host whose clock is 4 s ahead
    await roundTrip(20, 20); // slower than the kept samples, but it contradicts them
    const estimate = estimator.estimate()!;
    expect(estimate.samples).toBe(1);
    expect(Math.abs(estimate.offsetMs - 4_000)).toBeLessThanOrEqual(estimate.boundMs);
    expect(Math.abs(estimator.now() - (fake.now() + 4_000))).toBeLessThanOrEqual(estimate.boundMs);
  });

  it('the bound grows with the age of the sample (drift allowance)', async () => {
    const { fake, estimator, roundTrip } = setup(0);
    await roundTrip(5, 5);
    const fresh = estimator.estimate()!.boundMs;
    await fake.advance(3_600_000);
    expect(estimator.estimate()!.boundMs).toBeGreaterThan(fresh + 50); // 15 ppm of an hour = 54 ms
  });

  it('ignores samples with a negative round trip or no time', () => {
    const fake = new FakeClock(0);
    const estimator = new ClockOffsetEstimator(fake);
    expect(estimator.record({ sentMono: 10, receivedMono: 5, backendTime: 0 })).toBe(false);
    expect(estimator.record({ sentMono: 0, receivedMono: 5, backendTime: Number.NaN })).toBe(false);
    expect(estimator.estimate()).toBeNull();
  });
});
