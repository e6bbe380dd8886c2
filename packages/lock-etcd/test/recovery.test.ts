import { type ClaimRequest, isFleetcronError } from '@fleetcron/core';
import { startEtcd, waitFor } from '@fleetcron/testkit';
import { afterAll, describe, expect, it } from 'vitest';
import { etcdFixture, lazy } from './fixture.js';

// Issue 11: etcd claims failed for ~2 s after the server was back (etcd3's circuit breaker).
// The lock's calls now bypass etcd3's retry and circuit-breaker policies (README, "After a
// server restart"). Measured here on a real restart; the 500 ms target is reported, 2 s asserted.

const dedicated = lazy(() => startEtcd({ strategy: 'managed' }));
afterAll(async () => {
  await (await dedicated()).close();
});

const req = (fireAt: number): ClaimRequest => ({
  key: 'recovery',
  fireAt,
  owner: 'a',
  leaseMs: 2000,
  exclusive: false,
});

describe('EtcdLock after a server restart', () => {
  it('claims succeed again within 2 s of the server being ready', async () => {
    const etcd = await dedicated();
    const fixture = await etcdFixture(etcd, { requestTimeoutMs: 1000 });
    try {
      const lock = await fixture.newLock();
      let fireAt = Math.floor(Date.now() / 1000) * 1000 - 30_000;
      expect((await lock.claim(req(fireAt++))).status).toBe('won');

      await etcd.stop?.();
      // Several claims fail while the server is down: enough to open etcd3's default breaker.
      for (let i = 0; i < 5; i++) {
        const error = await lock.claim(req(fireAt++)).then(
          (answer) => new Error(`answered ${answer.status} with the server stopped`),
          (e: unknown) => e,
        );
        expect(isFleetcronError(error, 'BACKEND_UNAVAILABLE'), String(error)).toBe(true);
      }
      await etcd.start?.(); // resolves once the server answers its health check
      const ready = performance.now();
      const answer = await waitFor(
        async () => {
          try {
            return await lock.claim(req(fireAt++));
          } catch (error) {
            if (!isFleetcronError(error, 'BACKEND_UNAVAILABLE')) throw error;
            return undefined;
          }
        },
        { timeoutMs: 30_000, intervalMs: 20, message: 'a claim to be answered after restart' },
      );
      const recoveredMs = Math.round(performance.now() - ready);
      console.log(`etcd: first successful claim ${recoveredMs} ms after the server was ready`);
      expect(answer.status).toBe('won');
      expect(recoveredMs, 'first successful claim after the server is ready').toBeLessThan(2_000);
    } finally {
      await fixture.close();
    }
  }, 120_000);
});
