import {
  BackendUnavailableError,
  type ClaimRequest,
  type ClaimResult,
  InvalidOptionError,
  type Lease,
  LeaseTooShortError,
} from '@fleetcron/core';
import { startEtcd, waitFor } from '@fleetcron/testkit';
import { afterAll, describe, expect, it } from 'vitest';
import { ETCD_MAX_BATCH, type EtcdLock, type EtcdLockOptions } from '../src/index.js';
import { etcdFixture, lazy } from './fixture.js';

// A server of this file's own: one test counts the revisions a batch takes (one per transaction).
const server = lazy(() => startEtcd({ strategy: 'managed' }));
afterAll(async () => {
  await (await server()).close();
});

const second = () => Math.floor(Date.now() / 1000) * 1000 - 1000;
const req = (key: string, fireAt: number, owner: string, leaseMs = 5_000): ClaimRequest => ({
  ...{ key, fireAt, owner, leaseMs, exclusive: true },
});
const won = (results: ClaimResult[]) =>
  results.map((r) => (r.status === 'won' ? r.lease : null)).filter((l): l is Lease => l !== null);

type Fixture = Awaited<ReturnType<typeof etcdFixture>>;

/** Runs `body` with a fresh fixture (unique prefix) and closes it. */
async function withFixture(body: (fixture: Fixture) => Promise<void>): Promise<void> {
  const fixture = await etcdFixture(await server());
  try {
    await body(fixture);
  } finally {
    await fixture.close();
  }
}

/** A lock of the fixture, typed as an `EtcdLock`. */
async function newLock(fixture: Fixture, options: EtcdLockOptions = {}): Promise<EtcdLock> {
  return (await fixture.newLock(options)) as EtcdLock;
}

/** The etcd lease that carries lease key `x/{key}` of the fixture's prefix. */
async function etcdLeaseOf(fixture: Fixture, key: string): Promise<string | undefined> {
  const res = await fixture.admin.kv.range({ key: Buffer.from(`${fixture.prefix}x/${key}`) });
  return res.kvs[0]?.lease;
}

/** The etcd store revision (one per write transaction). */
async function revision(fixture: Fixture): Promise<number> {
  const res = await fixture.admin.kv.range({ key: Buffer.from('revision-probe') });
  return Number(res.header.revision);
}

describe('EtcdLock.claimMany', () => {
  it('takes one transaction per 124 requests, sent together (revisions = transactions)', async () => {
    await withFixture(async (fixture) => {
      const lock = await newLock(fixture);
      expect(lock.capabilities.maxBatch).toBe(ETCD_MAX_BATCH);
      const fireAt = second();
      await lock.claim(req('warm-up', fireAt, 'a')); // the etcd clock and the record lease
      const before = await revision(fixture);
      const results = await lock.claimMany(
        Array.from({ length: 300 }, (_, i) => req(`many-${i}`, fireAt, 'a')),
      );
      const after = await revision(fixture);
      expect(results.filter((r) => r.status === 'won')).toHaveLength(300);
      expect(after - before).toBe(3); // ceil(300 / 124) write transactions
      expect(new Set(won(results).map((l) => l.token)).size).toBe(3);
      const again = await lock.claimMany(
        Array.from({ length: 300 }, (_, i) => req(`many-${i}`, fireAt, 'a')),
      );
      expect(won(again)).toEqual(won(results)); // a re-sent batch: the same leases
      expect(await revision(fixture)).toBe(after); // and nothing written
    });
  });

  it('after a burst the pool keeps its size in spares: the next burst grants no lease inline', async () => {
    await withFixture(async (fixture) => {
      const lock = await newLock(fixture);
      const fireAt = second();
      const burst = (tag: string) =>
        lock.claimMany(Array.from({ length: 300 }, (_, i) => req(`${tag}-${i}`, fireAt, 'a')));
      const leases = async () =>
        new Set((await fixture.admin.leaseClient.leaseLeases()).leases.map((l) => String(l.ID)));
      expect(won(await burst('first'))).toHaveLength(300); // 3 transactions: 3 etcd leases
      // The pool tops up in the background: wait until the lease count stays put.
      let seen = -1;
      await waitFor(
        async () => {
          const count = (await leases()).size;
          const stable = count === seen;
          seen = count;
          return stable;
        },
        { intervalMs: 300, message: 'the lease pool kept granting' },
      );
      const granted = await leases();
      expect(won(await burst('second'))).toHaveLength(300);
      for (const key of ['second-0', 'second-150', 'second-299']) {
        const lease = await etcdLeaseOf(fixture, key);
        expect(granted.has(String(lease)), `${key} on a lease granted before the burst`).toBe(true);
      }
    });
  });

  it('overlapping batches from two clients never both win a fire', async () => {
    await withFixture(async (fixture) => {
      const [a, b] = [await newLock(fixture), await newLock(fixture)];
      const fireAt = second();
      for (let round = 0; round < 4; round++) {
        const keys = Array.from({ length: 150 }, (_, i) => `r${round}-k${i}`);
        const [fromA, fromB] = await Promise.all([
          a.claimMany(keys.slice(0, 100).map((k) => req(k, fireAt, 'a'))),
          b.claimMany(keys.slice(50).map((k) => req(k, fireAt, 'b'))),
        ]);
        const owners = new Map<string, string[]>();
        for (const result of [...fromA, ...fromB]) {
          if (result.status !== 'won') {
            expect(result).toMatchObject({ status: 'lost', reason: 'claimed' });
            continue;
          }
          const { key, owner } = result.lease;
          owners.set(key, [...(owners.get(key) ?? []), owner]);
        }
        expect(owners.size).toBe(150);
        for (const [key, list] of owners) expect(list, key).toHaveLength(1);
        const sample = await a.inspect(keys[75] as string);
        expect(sample.fires).toEqual([
          expect.objectContaining({ owner: owners.get(keys[75] as string)?.[0], outcome: 'won' }),
        ]);
      }
    });
  });

  it('a batch racing single claims on its keys: one winner per fire, tokens as inspected', async () => {
    await withFixture(async (fixture) => {
      const [a, b] = [await newLock(fixture), await newLock(fixture)];
      const fireAt = second();
      let batchWins = 0;
      let singleWins = 0;
      for (let round = 0; round < 20; round++) {
        const keys = Array.from({ length: 40 }, (_, i) => `race${round}-k${i}`);
        const contested = keys[round % 40] as string;
        const [batch, single] = await Promise.all([
          a.claimMany(keys.map((k) => req(k, fireAt, 'a'))),
          b.claim(req(contested, fireAt, 'b')),
        ]);
        const fromBatch = batch[round % 40] as ClaimResult;
        const winners = [fromBatch, single].filter((r) => r.status === 'won');
        expect(winners, `round ${round}`).toHaveLength(1);
        const loser = [fromBatch, single].find((r) => r.status !== 'won');
        expect(loser).toMatchObject({ status: 'lost', reason: 'claimed' });
        if (fromBatch.status === 'won') batchWins++;
        else singleWins++;
        const { fires } = await a.inspect(contested);
        const winner = (winners[0] as Extract<ClaimResult, { status: 'won' }>).lease;
        expect(fires).toEqual([
          { fireAt, owner: winner.owner, outcome: 'won', token: winner.token },
        ]);
        expect(batch.filter((r) => r.status === 'won')).toHaveLength(
          fromBatch.status === 'won' ? 40 : 39,
        );
      }
      console.log(`batch vs single races: batch won ${batchWins}, single won ${singleWins}`);
    });
  });

  it('extendMany and releaseMany answer like singles; keys not renewed expire with the batch lease', async () => {
    await withFixture(async (fixture) => {
      const lock = await newLock(fixture);
      const fireAt = second();
      const requests = Array.from({ length: 6 }, (_, i) => req(`h${i}`, fireAt, 'a', 5_000));
      const held = won(await lock.claimMany(requests));
      expect(held).toHaveLength(6);
      // One transaction's wins share one etcd lease.
      const shared = await etcdLeaseOf(fixture, 'h0');
      for (const lease of held) expect(await etcdLeaseOf(fixture, lease.key)).toBe(shared);
      const renewed = held.slice(0, 3);
      const foreign = { ...(held[0] as Lease), token: (held[0] as Lease).token + 1_000 };
      const before = await revision(fixture);
      // Not longer than the etcd lease's TTL (6 s): only its being shared makes the keys move.
      const extended = await lock.extendMany([...renewed, foreign], [5_000, 5_000, 5_000, 5_000]);
      expect((await revision(fixture)) - before).toBe(1); // the three moves in one transaction
      expect(extended.at(-1)).toBeNull();
      expect(await lock.extend(foreign, 5_000)).toBeNull();
      for (const [i, lease] of extended.slice(0, -1).entries()) {
        expect(lease).toMatchObject({ key: renewed[i]?.key, token: renewed[i]?.token });
        // The etcd host's time once measured (a measurement may fail on a loaded machine).
        const measured = lock.etcdClockOffset() !== null;
        expect(typeof lease?.backendTime).toBe(measured ? 'number' : 'undefined');
      }
      // The first renewal moved each renewed key to an etcd lease of its own.
      const moved = await Promise.all(renewed.map((lease) => etcdLeaseOf(fixture, lease.key)));
      expect(new Set(moved).size).toBe(3);
      expect(moved).not.toContain(shared);
      // The shared etcd lease is never kept alive (TTL 6 s): while the holder keeps renewing its
      // three leases (one keepalive stream now), the keys nobody renewed expire...
      await waitFor(
        async () => {
          const again = await lock.extendMany(renewed, [5_000, 5_000, 5_000]);
          expect(again.map((lease) => lease?.token)).toEqual(renewed.map((l) => l.token));
          const left = await Promise.all(held.slice(3).map((l) => lock.inspect(l.key)));
          return left.every((inspection) => inspection.leases.length === 0);
        },
        { timeoutMs: 12_000, intervalMs: 250, message: 'the keys nobody renewed did not expire' },
      );
      // ...while the renewed ones still hold their leases.
      for (const lease of renewed) {
        expect(
          (await lock.inspect(lease.key)).leases.map((l) => l.token),
          lease.key,
        ).toEqual([lease.token]);
      }
      const released = await lock.releaseMany([...renewed, foreign, held[4] as Lease]);
      expect(released).toEqual([true, true, true, false, false]);
      expect(await lock.releaseMany(renewed)).toEqual([false, false, false]);
      for (const lease of renewed) expect((await lock.inspect(lease.key)).leases).toEqual([]);
    });
  });

  it('sends nothing once aborted; refuses more than maxBatch and short leases; [] costs nothing', async () => {
    await withFixture(async (fixture) => {
      const lock = await newLock(fixture);
      const fireAt = second();
      await lock.claim(req('warm-up', fireAt, 'a'));
      const controller = new AbortController();
      controller.abort();
      const batch = Array.from({ length: 5 }, (_, i) => req(`aborted-${i}`, fireAt, 'a'));
      const before = await revision(fixture);
      await expect(lock.claimMany(batch, { signal: controller.signal })).rejects.toBeInstanceOf(
        BackendUnavailableError,
      );
      await expect(
        lock.releaseMany(
          [{ key: 'x', fireAt, owner: 'a', token: 1, expiresAt: 0, exclusive: true }],
          {
            signal: controller.signal,
          },
        ),
      ).rejects.toBeInstanceOf(BackendUnavailableError);
      expect(await revision(fixture)).toBe(before);
      for (const { key } of batch) expect((await lock.inspect(key)).fires).toEqual([]);
      // Aborted while it waits (a new lock's first claim waits for the etcd clock measurement).
      const fresh = await newLock(fixture);
      const later = new AbortController();
      const pending = fresh.claimMany(batch, { signal: later.signal });
      await new Promise((resolve) => setImmediate(resolve));
      later.abort();
      await expect(pending).rejects.toBeInstanceOf(BackendUnavailableError);
      expect(await revision(fixture)).toBe(before);

      const tooMany = Array.from({ length: ETCD_MAX_BATCH + 1 }, (_, i) =>
        req(`m-${i}`, fireAt, 'a'),
      );
      const error = await lock.claimMany(tooMany).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(InvalidOptionError);
      expect((error as InvalidOptionError).field).toBe('requests');
      const short = await lock
        .claimMany([req('ok', fireAt, 'a'), req('short', fireAt, 'a', 1_000)])
        .catch((e: unknown) => e);
      expect(short).toBeInstanceOf(LeaseTooShortError);
      expect((short as LeaseTooShortError).field).toBe('requests[1].leaseMs');
      expect((await lock.inspect('ok')).fires).toEqual([]);
      expect(await lock.claimMany([])).toEqual([]);
      expect(await revision(fixture)).toBe(before);
    });
  });

  it('maxTxnOps splits batches for a cluster with a lower --max-txn-ops', async () => {
    await withFixture(async (fixture) => {
      const lock: EtcdLock = await newLock(fixture, { maxTxnOps: 20 });
      const fireAt = second();
      await lock.claim(req('warm-up', fireAt, 'a'));
      const before = await revision(fixture);
      const results = await lock.claimMany(
        Array.from({ length: 40 }, (_, i) => req(`s-${i}`, fireAt, 'a')),
      );
      expect(results.filter((r) => r.status === 'won')).toHaveLength(40);
      expect((await revision(fixture)) - before).toBe(3); // 16 requests per transaction
    });
  });
});
