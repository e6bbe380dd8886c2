import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  BackendUnavailableError,
  type ClaimRequest,
  InvalidOptionError,
  type Lease,
} from '@fleetcron/core';
import { afterEach, describe, expect, it } from 'vitest';
import { SQLITE_MAX_BATCH, SqliteLock } from '../src/index.js';

const opened: SqliteLock[] = [];
const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((lock) => lock.close()));
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A new file, and `n` locks on it (each its own worker thread and connection). */
function locksOnNewFile(n: number): SqliteLock[] {
  const dir = mkdtempSync(join(tmpdir(), 'fleetcron-sqlite-batch-'));
  dirs.push(dir);
  const locks = Array.from({ length: n }, () => new SqliteLock(join(dir, 'lock.db')));
  opened.push(...locks);
  return locks;
}

const second = () => Math.floor(Date.now() / 1000) * 1000 - 1000;
const req = (key: string, fireAt: number, owner: string): ClaimRequest => ({
  ...{ key, fireAt, owner, leaseMs: 30_000, exclusive: true },
});

describe('SqliteLock.claimMany', () => {
  it('overlapping batches from two processes never both win a fire', async () => {
    const [a, b] = locksOnNewFile(2) as [SqliteLock, SqliteLock];
    const fireAt = second();
    for (let round = 0; round < 5; round++) {
      const keys = Array.from({ length: 90 }, (_, i) => `r${round}-k${i}`);
      const [fromA, fromB] = await Promise.all([
        a.claimMany(keys.slice(0, 60).map((k) => req(k, fireAt, 'a'))),
        b.claimMany(keys.slice(30).map((k) => req(k, fireAt, 'b'))),
      ]);
      const winners = new Map<string, string[]>();
      for (const result of [...fromA, ...fromB]) {
        if (result.status !== 'won') {
          expect(result).toMatchObject({ status: 'lost', reason: 'claimed' });
          continue;
        }
        winners.set(result.lease.key, [
          ...(winners.get(result.lease.key) ?? []),
          result.lease.owner,
        ]);
      }
      expect(winners.size).toBe(90);
      for (const [key, owners] of winners) {
        expect(owners, key).toHaveLength(1);
        const fires = (await a.inspect(key)).fires;
        expect(fires).toEqual([expect.objectContaining({ owner: owners[0], outcome: 'won' })]);
      }
    }
  });

  it('a re-sent batch gets the same leases; extendMany and releaseMany answer like singles', async () => {
    const [lock] = locksOnNewFile(1) as [SqliteLock];
    const fireAt = second();
    const batch = Array.from({ length: 20 }, (_, i) => req(`job-${i}`, fireAt, 'a'));
    const first = await lock.claimMany(batch);
    const again = await lock.claimMany(batch);
    const leases = first.map((r) => (r.status === 'won' ? r.lease : null));
    expect(leases.every((l) => l !== null)).toBe(true);
    expect(again.map((r) => (r.status === 'won' ? r.lease : r))).toEqual(leases);

    const held = leases as Lease[];
    // A stale token (not held) beside live ones: answered null / false like the single calls.
    const foreign = { ...(held[0] as Lease), token: (held[0] as Lease).token + 100 };
    const extended = await lock.extendMany([...held, foreign], [...held.map(() => 60_000), 60_000]);
    expect(extended.at(-1)).toBeNull();
    expect(await lock.extend(foreign, 60_000)).toBeNull();
    for (const [i, lease] of extended.slice(0, -1).entries()) {
      expect(lease).toMatchObject({ token: held[i]?.token, key: held[i]?.key });
      expect((lease as Lease).expiresAt).toBeGreaterThan((held[i] as Lease).expiresAt);
      expect(typeof (lease as Lease).backendTime).toBe('number');
    }
    const released = await lock.releaseMany([...held.slice(0, 10), foreign]);
    expect(released).toEqual([...held.slice(0, 10).map(() => true), false]);
    expect(await lock.releaseMany(held.slice(0, 10))).toEqual(held.slice(0, 10).map(() => false));
    expect(await lock.release(held[10] as Lease)).toBe(true);
    expect((await lock.inspect('job-0')).leases).toEqual([]);
    expect((await lock.inspect('job-19')).leases).toHaveLength(1);
    await expect(lock.extendMany(held, [60_000])).rejects.toMatchObject({ field: 'leaseMs' });
  });

  it('sends nothing once the signal is aborted; refuses more than maxBatch; [] costs nothing', async () => {
    const [lock] = locksOnNewFile(1) as [SqliteLock];
    const fireAt = second();
    const controller = new AbortController();
    controller.abort();
    const batch = Array.from({ length: 5 }, (_, i) => req(`aborted-${i}`, fireAt, 'a'));
    await expect(lock.claimMany(batch, { signal: controller.signal })).rejects.toBeInstanceOf(
      BackendUnavailableError,
    );
    for (const { key } of batch) expect((await lock.inspect(key)).fires).toEqual([]);

    const tooMany = Array.from({ length: SQLITE_MAX_BATCH + 1 }, (_, i) =>
      req(`m-${i}`, fireAt, 'a'),
    );
    const error = await lock.claimMany(tooMany).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidOptionError);
    expect((error as InvalidOptionError).field).toBe('requests');
    const bad = await lock
      .claimMany([req('ok', fireAt, 'a'), { ...req('bad', fireAt, 'a'), leaseMs: 0 }])
      .catch((e: unknown) => e);
    expect((bad as InvalidOptionError).field).toBe('requests[1].leaseMs');
    expect((await lock.inspect('ok')).fires).toEqual([]);
    expect(await lock.claimMany([])).toEqual([]);
    expect(await lock.claimMany([], { signal: controller.signal })).toEqual([]);
  });

  it('claims a full batch in one transaction of a few ms', async () => {
    const [lock] = locksOnNewFile(1) as [SqliteLock];
    expect(lock.capabilities.maxBatch).toBe(SQLITE_MAX_BATCH);
    await lock.open();
    const fireAt = second();
    const batch = Array.from({ length: SQLITE_MAX_BATCH }, (_, i) => req(`full-${i}`, fireAt, 'a'));
    const startedAt = performance.now();
    const results = await lock.claimMany(batch);
    const elapsed = performance.now() - startedAt;
    expect(results.filter((r) => r.status === 'won')).toHaveLength(SQLITE_MAX_BATCH);
    // One backendTime for the whole batch: it ran as one transaction at one instant.
    expect(new Set(results.map((r) => r.backendTime)).size).toBe(1);
    console.log(`sqlite claimMany of ${SQLITE_MAX_BATCH}: ${elapsed.toFixed(1)} ms`);
    expect(elapsed).toBeLessThan(2_000);
  });
});
