import {
  BackendUnavailableError,
  type ClaimRequest,
  InvalidOptionError,
  isFleetcronError,
} from '@fleetcron/core';
import { ReplyDroppingProxy, waitFor } from '@fleetcron/testkit';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { REDIS_MAX_BATCH, RedisLock } from '../src/index.js';
import { clientErrors, dedicatedServer, newClient, sharedUrl, uniquePrefix } from './fixture.js';

// claimMany / extendMany / releaseMany on one Redis node (the Cluster runs are in
// lock.batch.cluster.test.ts): answers equal to single claims, idempotent re-sends, one winner
// between overlapping batches, the abort rule and the batch size limit.

const server = dedicatedServer();
const opened: Redis[] = [];
const proxies: ReplyDroppingProxy[] = [];
afterAll(async () => {
  for (const client of opened) client.disconnect();
  for (const proxy of proxies) await proxy.close();
  await server.close();
});

function client(url = sharedUrl()): Redis {
  const c = newClient(url);
  opened.push(c);
  return c;
}

async function evalshaCalls(admin: Redis): Promise<number> {
  const info = await admin.info('commandstats');
  const calls = (name: string) =>
    Number(new RegExp(`cmdstat_${name}:calls=(\\d+)`).exec(info)?.[1] ?? 0);
  return calls('evalsha') + calls('eval');
}

const req = (key: string, fireAt: number, owner: string, exclusive = true): ClaimRequest => ({
  key,
  fireAt,
  owner,
  leaseMs: 30_000,
  exclusive,
});

describe('RedisLock.claimMany on one node', () => {
  it('answers a re-sent batch with the same leases (a reply lost on the way)', async () => {
    const redis = await server.get();
    const proxy = await ReplyDroppingProxy.start(redis.url);
    proxies.push(proxy);
    const prefix = uniquePrefix();
    const viaProxy = new Redis(proxy.url, { maxRetriesPerRequest: null, retryStrategy: () => 20 });
    viaProxy.on('error', (error: Error) => clientErrors.push(error));
    opened.push(viaProxy);
    const lock = new RedisLock(viaProxy, { prefix });
    const direct = new RedisLock(client(redis.url), { prefix });
    const t = Date.now() - 1_000;
    const batch = Array.from({ length: 300 }, (_, i) =>
      req(`job-${i % 120}`, t - (i % 3), 'me', i % 2 === 0),
    );
    await lock.inspect('warm-up'); // connected, inspect script cached
    proxy.dropNextReply = true; // the first script's reply is lost: ioredis re-sends after reconnect
    const first = await lock.claimMany(batch);
    expect(proxy.dropped).toBe(1);
    const again = await direct.claimMany(batch);
    expect(again).toHaveLength(batch.length);
    for (const [i, result] of first.entries()) {
      const { backendTime: _a, ...a } = result;
      const { backendTime: _b, ...b } = again[i]!;
      expect(b, `request ${i}`).toEqual(a);
    }
    const won = first.filter((r) => r.status === 'won').length;
    expect(won).toBeGreaterThan(100);
  });

  it('lets two instances send overlapping batches: every fire is won exactly once', async () => {
    const prefix = uniquePrefix();
    const a = new RedisLock(client(), { prefix });
    const b = new RedisLock(client(), { prefix });
    const t = Date.now() - 1_000;
    for (let round = 0; round < 5; round++) {
      const fires = Array.from({ length: 400 }, (_, i) => ({
        key: `job-${i % 50}`,
        fireAt: t - round * 1_000 - Math.floor(i / 50),
      }));
      const ofA = fires.map((f) => req(f.key, f.fireAt, 'a', false));
      const ofB = [...fires].reverse().map((f) => req(f.key, f.fireAt, 'b', false));
      const [ra, rb] = await Promise.all([a.claimMany(ofA), b.claimMany(ofB)]);
      const winners = new Map<string, string[]>();
      for (const r of [...ra, ...rb]) {
        if (r.status !== 'won') {
          expect(r.status === 'lost' && r.reason).toBe('claimed');
          continue;
        }
        const id = `${r.lease.key}@${r.lease.fireAt}`;
        winners.set(id, [...(winners.get(id) ?? []), r.lease.owner]);
      }
      expect(winners.size, `round ${round}: every fire has a winner`).toBe(fires.length);
      for (const [id, owners] of winners) expect(owners, id).toHaveLength(1);
    }
  });

  it('packs owners of any content, mixed owners and catch-up claims: answers as single claims do', async () => {
    // owners holding the packing's separators, digits before a colon, multi-byte characters and
    // a lone surrogate; several owners per job (one wins, the others lose, the winner replays)
    const owners = ['a|b', '12:x', ':', 'é€😀|', '\uD800z', 'me'];
    const t = Date.now() - 1_000;
    const batch: ClaimRequest[] = [];
    for (let job = 0; job < 4; job++) {
      for (const owner of owners) batch.push(req(`job-${job}`, t - job, owner, job % 2 === 0));
    }
    for (const owner of owners) batch.push(req('job-1', t - 1, owner, false)); // replays, losses
    batch.push(req('job-1', t + 60_000, 'a|b', false)); // early
    batch.push(req('job-2', t - 3_600_000, ':', true)); // stale
    const old = t - 600_000; // older than the window: only a catch-up claim may take it
    batch.push({ ...req('catch-up', old, '12:x', false), catchUp: { since: old - 60_000 } });
    batch.push({ ...req('catch-up', old - 1, 'me', false), catchUp: { since: old - 60_000 } });
    const many = await new RedisLock(client(), { prefix: uniquePrefix() }).claimMany(batch);
    const singly = new RedisLock(client(), { prefix: uniquePrefix() });
    const single = [];
    for (const request of batch) single.push(await singly.claim(request));
    const shape = (r: (typeof many)[number]) =>
      r.status === 'won'
        ? { status: r.status, owner: r.lease.owner, exclusive: r.lease.exclusive, key: r.lease.key }
        : r.status === 'lost'
          ? { status: r.status, reason: r.reason, key: r.key, fireAt: r.fireAt }
          : { status: r.status, key: r.key, fireAt: r.fireAt };
    expect(many.map(shape)).toEqual(single.map(shape));
    const statuses = many.map((r) => (r.status === 'lost' ? r.reason : r.status));
    expect(statuses.slice(0, 6)).toEqual(['won', ...owners.slice(1).map(() => 'claimed')]);
    expect(statuses.slice(24, 30)).toEqual(['won', ...owners.slice(1).map(() => 'claimed')]);
    expect(statuses.slice(30)).toEqual(['early', 'stale', 'won', 'behind_mark']);
    // the replay of job-1's winner answers its lease: same token
    const first = many[6]!;
    const replay = many[24]!;
    expect(first.status === 'won' && replay.status === 'won').toBe(true);
    if (first.status === 'won' && replay.status === 'won') {
      expect(replay.lease.token).toBe(first.lease.token);
    }
  });

  it('renews and releases many leases as extend and release would', async () => {
    const prefix = uniquePrefix();
    const lock = new RedisLock(client(), { prefix });
    const t = Date.now() - 1_000;
    const won = await lock.claimMany(
      Array.from({ length: 200 }, (_, i) =>
        req(`job-${i % 100}`, t - Math.floor(i / 100), 'me', false),
      ),
    );
    const leases = won
      .map((r) => (r.status === 'won' ? r.lease : undefined))
      .filter((l) => l !== undefined);
    expect(leases).toHaveLength(200);
    const stranger = { ...leases[0]!, token: leases[0]!.token + 12_345 };
    const extended = await lock.extendMany(
      [...leases, stranger],
      [...leases.map(() => 60_000), 60_000],
    );
    expect(extended.at(-1)).toBeNull();
    for (const [i, lease] of leases.entries()) {
      const renewed = extended[i]!;
      expect(renewed).not.toBeNull();
      expect(renewed!.token).toBe(lease.token);
      expect(renewed!.expiresAt).toBeGreaterThan(lease.expiresAt);
      expect(renewed!.backendTime).toBeTypeOf('number');
    }
    const released = await lock.releaseMany([...leases.slice(0, 150), stranger]);
    expect(released).toEqual([...leases.slice(0, 150).map(() => true), false]);
    expect(await lock.releaseMany(leases.slice(0, 150))).toEqual(
      leases.slice(0, 150).map(() => false),
    );
    expect(await lock.extend(leases[0]!, 1_000)).toBeNull();
    expect(await lock.extend(leases[199]!, 1_000)).not.toBeNull();
    expect((await lock.inspect('job-99')).leases.map((l) => l.fireAt)).toEqual([t - 1]);
  });

  it('refuses a batch larger than capabilities.maxBatch, and sends nothing for an empty one', async () => {
    // on this file's own server: the EVALSHA count of the shared one moves with other files'
    // claims (CI at c55edc5: 1357 calls against 1356)
    const redis = await server.get();
    const admin = client(redis.url);
    const lock = new RedisLock(client(redis.url), { prefix: uniquePrefix() });
    expect(lock.capabilities.maxBatch).toBe(REDIS_MAX_BATCH);
    const t = Date.now();
    const tooMany = Array.from({ length: REDIS_MAX_BATCH + 1 }, (_, i) => req(`j${i}`, t, 'me'));
    for (const call of [
      () => lock.claimMany(tooMany),
      () => lock.releaseMany(tooMany.map((r) => ({ ...r, token: 1, expiresAt: t }))),
      () =>
        lock.extendMany(
          tooMany.map((r) => ({ ...r, token: 1, expiresAt: t })),
          tooMany.map(() => 1),
        ),
    ]) {
      const error = await call().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(InvalidOptionError);
      expect((error as InvalidOptionError).field).toBe('requests');
    }
    const bad = await lock.claimMany([req('j', 1.5, 'me')]).catch((e: unknown) => e);
    expect((bad as InvalidOptionError).field).toBe('fireAt');
    const before = await evalshaCalls(admin);
    expect(await lock.claimMany([])).toEqual([]);
    expect(await lock.releaseMany([])).toEqual([]);
    expect(await lock.extendMany([], [])).toEqual([]);
    expect(await evalshaCalls(admin)).toBe(before);
  });

  it('sends nothing once the batch signal is aborted: not at once, not from the offline queue', async () => {
    const redis = await server.get();
    const admin = client(redis.url);
    const prefix = uniquePrefix();
    const lock = new RedisLock(client(redis.url), { prefix });
    const t = Date.now() - 1_000;
    const batch = Array.from({ length: 50 }, (_, i) => req(`job-${i}`, t, 'me'));
    await lock.inspect('warm-up');
    const before = await evalshaCalls(admin);
    const aborted = AbortSignal.abort();
    const error = await lock.claimMany(batch, { signal: aborted }).catch((e: unknown) => e);
    expect(isFleetcronError(error) && error instanceof BackendUnavailableError).toBe(true);
    expect(await evalshaCalls(admin)).toBe(before);

    // Queued while disconnected, aborted before the connection is back: never runs.
    const proxy = await ReplyDroppingProxy.start(redis.url);
    proxies.push(proxy);
    const queueing = new Redis(proxy.url, {
      maxRetriesPerRequest: null,
      retryStrategy: () => 50,
      enableOfflineQueue: true,
    });
    queueing.on('error', (e: Error) => clientErrors.push(e));
    opened.push(queueing);
    const queued = new RedisLock(queueing, { prefix, commandTimeoutMs: 60_000 });
    await queued.inspect('warm-up');
    proxy.refuseConnections = true;
    proxy.cutAll();
    await waitFor(() => queueing.status !== 'ready', { timeoutMs: 10_000, intervalMs: 10 });
    const controller = new AbortController();
    const givenUp = queued.claimMany(batch, { signal: controller.signal }).then(
      () => 'answered',
      (e: unknown) => e,
    );
    const kept = queued.claimMany(batch.map((r) => ({ ...r, fireAt: t + 1 })));
    controller.abort();
    expect(await givenUp).toBeInstanceOf(BackendUnavailableError);
    proxy.refuseConnections = false;
    const keptResults = await kept;
    expect(
      keptResults.every((r) => r.status === 'won'),
      'the batch without a signal ran',
    ).toBe(true);
    for (const job of ['job-0', 'job-49']) {
      const fires = (await lock.inspect(job)).fires.map((f) => f.fireAt);
      expect(fires, 'the given-up batch left no claim record').toEqual([t + 1]);
    }
    const other = await lock.claimMany(
      batch.map((r) => ({ ...r, owner: 'other', exclusive: false })),
    );
    expect(
      other.every((r) => r.status === 'won'),
      'another instance can still claim them',
    ).toBe(true);
  });
});
