import type { Lease, Lock } from '@fleetcron/core';
import { expect } from 'vitest';
import type { LockScenario } from '../types.js';
import { fireNear, leaseFor, using, waitUntilTime, wonLease } from '../util.js';
import {
  batchClaimerOf,
  chunks,
  expiryTolerance,
  reportNotApplicable,
} from './claim-many-support.js';
import { clients, req } from './helpers.js';

/** One lease to renew and release: how it was made, on a given key. */
interface RenewCase {
  name: string;
  /** Makes the lease (and the key's state) with single calls; returns the lease to send. */
  prepare(key: string): Promise<Lease>;
}

/** Lease fields that a renewal keeps. */
const identity = (lease: Lease | null) =>
  lease && {
    key: lease.key,
    fireAt: lease.fireAt,
    owner: lease.owner,
    token: lease.token,
    exclusive: lease.exclusive,
  };

/**
 * Scenario: `extendMany` and `releaseMany` (each when present) answer each lease as `extend` /
 * `release` would. Twin keys are prepared the same way (a live exclusive lease, a live per-fire
 * lease, a released one, one superseded by another owner's newer token, an expired one, one with
 * a token that was never issued); the batch goes to one twin, single calls to the other. Compared:
 * renewed or `null`, the lease's identity, the new expiry (each lease's own `leaseMs`), the
 * release answers, and the live leases left on each twin.
 */
export const claimManyRenewalsMatchSingles: LockScenario = {
  title: 'extendMany / releaseMany answer each lease as extend / release do',
  timeoutMs: 60_000,
  async run(options) {
    await using(options.create, async (fixture) => {
      const [a, b] = (await clients(fixture, 2)) as [Lock, Lock];
      const claimer = batchClaimerOf(a);
      if (!claimer) return reportNotApplicable(options, a);
      const { extendMany, releaseMany } = a;
      if (typeof extendMany !== 'function' && typeof releaseMany !== 'function') {
        return reportNotApplicable(options, a, 'has neither extendMany nor releaseMany');
      }
      const scale = options.timeScale ?? 1;
      const L = leaseFor(a.capabilities, 60_000);
      const short = leaseFor(a.capabilities, 1000);
      const t = fireNear(-30_000);
      const claim = async (lock: Lock, key: string, fireAt: number, owner: string, ms = L) =>
        wonLease(await lock.claim(req(key, fireAt, owner, ms, true)), `preparing ${key}`);
      const cases: RenewCase[] = [
        { name: 'live', prepare: (k) => claim(a, k, t, 'a') },
        {
          name: 'live-overlap',
          prepare: async (k) => wonLease(await a.claim(req(k, t, 'a', L, false)), `preparing ${k}`),
        },
        {
          name: 'released',
          prepare: async (k) => {
            const lease = await claim(a, k, t, 'a');
            expect(await a.release(lease)).toBe(true);
            return lease;
          },
        },
        {
          name: 'superseded',
          prepare: async (k) => {
            const lease = await claim(a, k, t, 'a');
            expect(await a.release(lease)).toBe(true);
            await claim(b, k, t + 1000, 'b');
            return lease;
          },
        },
        { name: 'expired', prepare: (k) => claim(a, k, t, 'a', short) },
        {
          name: 'never-issued',
          prepare: async (k) => ({ ...(await claim(a, k, t, 'a')), token: 1e12 }),
        },
      ];
      const twin = (name: string, side: 'batch' | 'single') => `renew ${name} (${side})`;
      const sent: Record<'batch' | 'single', Lease[]> = { batch: [], single: [] };
      for (const c of cases) {
        for (const side of ['batch', 'single'] as const) {
          sent[side].push(await c.prepare(twin(c.name, side)));
        }
      }
      const grace = (1000 + a.capabilities.leaseGranularityMs) * scale;
      const expired = cases.findIndex((c) => c.name === 'expired');
      const expiredAt = Math.max(sent.batch[expired]!.expiresAt, sent.single[expired]!.expiresAt);
      const bound = a.capabilities.backendTimeBoundMs ?? 0;
      await waitUntilTime(expiredAt + grace + bound, 'the short leases to expire');
      const tolerance = expiryTolerance(options, a);

      let kept = sent;
      if (typeof extendMany === 'function') {
        const ms = cases.map((_, i) => leaseFor(a.capabilities, i % 2 ? 90_000 : 45_000));
        const sentAt = Date.now();
        const batched: (Lease | null)[] = [];
        for (const [n, part] of chunks(sent.batch, claimer.maxBatch).entries()) {
          const from = n * claimer.maxBatch;
          batched.push(...(await extendMany.call(a, part, ms.slice(from, from + part.length))));
        }
        const single: (Lease | null)[] = [];
        for (const [i, lease] of sent.single.entries()) single.push(await a.extend(lease, ms[i]!));
        const apart = Date.now() - sentAt; // twin renewals happened at most this far apart
        expect(batched, 'extendMany answers one result per lease').toHaveLength(cases.length);
        cases.forEach((c, i) => {
          const what = `extendMany, ${c.name} lease: extendMany ${batched[i] ? 'renewed it' : 'answered null'}, extend ${single[i] ? 'renewed it' : 'answered null'}`;
          expect(batched[i] === null, what).toBe(single[i] === null);
          if (!batched[i] || !single[i]) return;
          expect(identity(batched[i]!), `${what}: the same lease`).toEqual(
            identity(sent.batch[i]!),
          );
          expect(
            Math.abs(batched[i]!.expiresAt - single[i]!.expiresAt),
            `${what}: expiry (its own leaseMs ${ms[i]})`,
          ).toBeLessThanOrEqual(tolerance + apart);
          expect(batched[i]!.expiresAt, `${what}: pushed to now + ${ms[i]}`).toBeGreaterThan(
            sentAt + ms[i]! - tolerance,
          );
        });
        expect(single.filter(Boolean).length, 'the live leases renew').toBe(2);
        kept = {
          batch: sent.batch.map((lease, i) => batched[i] ?? lease),
          single: sent.single.map((lease, i) => single[i] ?? lease),
        };
      }

      if (typeof releaseMany === 'function') {
        const batched: boolean[] = [];
        for (const part of chunks(kept.batch, claimer.maxBatch)) {
          batched.push(...(await releaseMany.call(a, part)));
        }
        const single: boolean[] = [];
        for (const lease of kept.single) single.push(await a.release(lease));
        expect(single, 'release: the live leases only').toEqual([
          true,
          true,
          false,
          false,
          false,
          false,
        ]);
        expect(batched, 'releaseMany answers as release does, lease by lease').toEqual(single);
      }

      for (const c of cases) {
        const [got, want] = await Promise.all(
          (['batch', 'single'] as const).map((side) => b.inspect(twin(c.name, side))),
        );
        const shape = (leases: Lease[]) =>
          leases.map((l) => ({ fireAt: l.fireAt, owner: l.owner, exclusive: l.exclusive }));
        expect(
          shape(got!.leases),
          `${c.name}: the live leases left after the batch equal those after single calls`,
        ).toEqual(shape(want!.leases));
      }
    });
  },
};
