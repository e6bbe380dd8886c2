import { describe, expect, it } from 'vitest';
import { ClockOffsetEstimator, DRIFT_PER_MS } from '../../src/backend.js';
import { FakeClock } from '../../src/index.js';

/**
 * The estimator keeps its best sample instead of searching its samples on every `now()`. This
 * checks it against the search it replaced: the kept sample with the smallest bound at the time
 * of reading (round trip / 2 + resolution / 2 + age × drift), newest on a tie.
 */
describe('ClockOffsetEstimator keeps the best sample', () => {
  it('matches a search of the kept samples at every reading, as time passes and samples come and go', async () => {
    const fake = new FakeClock(Date.UTC(2026, 0, 1));
    const estimator = new ClockOffsetEstimator(fake, { maxSamples: 4 });
    const kept: { offset: number; rtt: number; at: number }[] = [];
    let seed = 7;
    const random = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    for (let i = 0; i < 300; i++) {
      const sentMono = fake.monotonic();
      const rtt = Math.floor(random() * 40);
      await fake.advance(rtt);
      // a backend 250 ms ahead, read at a random point of the round trip (every sample agrees)
      const backendTime =
        Math.floor(sentMono + random() * rtt) + 250 + (fake.now() - fake.monotonic());
      estimator.record({ sentMono, receivedMono: fake.monotonic(), backendTime });
      kept.push({ offset: backendTime + 0.5 - (sentMono + rtt / 2), rtt, at: fake.monotonic() });
      if (kept.length > 4) kept.shift();
      await fake.advance(Math.floor(random() * 5_000));
      const now = fake.monotonic();
      let best = kept[0] as (typeof kept)[number];
      let bound = Number.POSITIVE_INFINITY;
      for (const s of kept) {
        const b = s.rtt / 2 + 0.5 + (now - s.at) * DRIFT_PER_MS;
        if (b <= bound) {
          best = s;
          bound = b;
        }
      }
      const estimate = estimator.estimate();
      expect(estimate?.rttMs, `reading ${i}`).toBe(best.rtt);
      expect(estimate?.boundMs).toBeCloseTo(bound, 9);
      expect(estimator.now()).toBe(Math.floor(now + best.offset));
    }
  });
});
