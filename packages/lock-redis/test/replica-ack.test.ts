import {
  type ClaimRequest,
  every,
  type FleetcronEvent,
  InvalidOptionError,
  isFleetcronError,
  Scheduler,
  subscribe,
} from '@fleetcron/core';
import { type RedisSentinel, startRedisSentinel, waitFor } from '@fleetcron/testkit';
import { fileServer } from '@fleetcron/testkit/vitest';
import { Redis } from 'ioredis';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { lockKeys, RedisLock, ReplicaAckError } from '../src/index.js';
import { clientErrors, uniquePrefix } from './fixture.js';

// replicaAck (#31): a primary and its replica (the testkit's Sentinel topology, Sentinels idle
// here); the replica is frozen with SIGSTOP to make it miss its acknowledgements.

// one Sentinel (fewer processes): nothing fails over in this file. The start takes about 5 s:
// the primary waits repl-diskless-sync-delay (5 s) before the replica's first sync.
const topology = fileServer(() => startRedisSentinel({ sentinels: 1 }));
const REPLICA = 1;
const ACK = { replicas: 1, timeoutMs: 300 } as const;
/** Slack on top of `ACK.timeoutMs` for a claim to fail closed on 2 loaded cores. */
const MARGIN_MS = 2_000;

const opened: Redis[] = [];
afterAll(async () => {
  for (const client of opened) client.disconnect();
});

let paused: RedisSentinel | undefined;
afterEach(async () => {
  // a failed test must not leave the replica frozen for the next one
  await paused?.resume(REPLICA);
  paused = undefined;
});

async function nodeClient(node: 0 | 1): Promise<Redis> {
  const ha = await topology();
  const client = new Redis({ ...ha.nodes[node], maxRetriesPerRequest: 3 });
  client.on('error', (error: Error) => clientErrors.push(error));
  opened.push(client);
  return client;
}

/** A lock on the primary (node 0: nothing fails over in this file). */
async function lockOnPrimary(prefix: string, withAck = true): Promise<RedisLock> {
  return new RedisLock(await nodeClient(0), { prefix, replicaAck: withAck ? ACK : undefined });
}

async function pauseReplica(): Promise<void> {
  const ha = await topology();
  await ha.pause(REPLICA);
  paused = ha;
}

const request = (key: string, fireAt: number, owner = 'a'): ClaimRequest => ({
  key,
  fireAt,
  owner,
  leaseMs: 30_000,
  exclusive: true,
});

/** A fire time a little in the past: inside the window, never `early`. */
const fireTime = (): number => Math.floor(Date.now() / 1000) * 1000 - 1000;

describe('replicaAck option', () => {
  it('rejects a bad replicaAck at construction with InvalidOptionError naming the field', () => {
    const client = new Redis({ lazyConnect: true });
    opened.push(client);
    const bad: [unknown, string][] = [
      [null, 'replicaAck'],
      ['1', 'replicaAck'],
      [{ replicas: 0, timeoutMs: 100 }, 'replicaAck.replicas'],
      [{ replicas: 1.5, timeoutMs: 100 }, 'replicaAck.replicas'],
      [{ timeoutMs: 100 }, 'replicaAck.replicas'],
      [{ replicas: 1, timeoutMs: 0 }, 'replicaAck.timeoutMs'],
      [{ replicas: 1, timeoutMs: 2.5 }, 'replicaAck.timeoutMs'],
      [{ replicas: 1, timeoutMs: 5_000 }, 'replicaAck.timeoutMs'], // = commandTimeoutMs
    ];
    for (const [replicaAck, field] of bad) {
      let thrown: unknown;
      try {
        new RedisLock(client, { replicaAck: replicaAck as never });
      } catch (error) {
        thrown = error;
      }
      expect(thrown, JSON.stringify(replicaAck)).toBeInstanceOf(InvalidOptionError);
      expect((thrown as InvalidOptionError).field, JSON.stringify(replicaAck)).toBe(field);
    }
    // below a raised commandTimeoutMs it is fine
    expect(
      () => new RedisLock(client, { commandTimeoutMs: 10_000, replicaAck: ACK }),
    ).not.toThrow();
  });
});

describe('replicaAck with a replica that acknowledges', () => {
  it('claims, batches and renewals win as before, and the replica holds each win when it is answered', async () => {
    const prefix = uniquePrefix();
    const lock = await lockOnPrimary(prefix);
    const replica = await nodeClient(REPLICA);
    const fireAt = fireTime();

    const single = await lock.claim(request('single', fireAt));
    expect(single.status).toBe('won');
    // read on the replica right after the answer: WAIT made it hold the record already
    expect(await replica.get(`${lockKeys(prefix, 'single').fire}${fireAt}`)).toMatch(/^w\|/);

    const keys = ['b0', 'b1', 'b2'];
    const batch = await lock.claimMany(keys.map((key) => request(key, fireAt)));
    expect(batch.map((result) => result.status)).toEqual(['won', 'won', 'won']);
    for (const key of keys) {
      expect(await replica.get(`${lockKeys(prefix, key).fire}${fireAt}`), key).toMatch(/^w\|/);
    }
    // lost claims need no acknowledgement and answer as before
    const other = await lockOnPrimary(prefix);
    expect((await other.claim(request('single', fireAt, 'b'))).status).toBe('lost');

    if (single.status !== 'won') throw new Error('unreachable');
    const renewed = await lock.extend(single.lease, 60_000);
    expect(renewed?.expiresAt).toBeGreaterThan(single.lease.expiresAt);
    const lease = await replica.hget(lockKeys(prefix, 'single').job, 'x');
    expect(lease?.split('|')[1]).toBe(String(renewed?.expiresAt));
  });
});

describe('replicaAck with the replica frozen (SIGSTOP)', () => {
  it('a won claim fails closed within timeoutMs with ReplicaAckError and is handed back', async () => {
    const prefix = uniquePrefix();
    const lock = await lockOnPrimary(prefix);
    const plain = await lockOnPrimary(prefix, false);
    const fireAt = fireTime();
    await pauseReplica();

    const started = Date.now();
    const error = await lock.claim(request('job', fireAt)).then(
      () => null,
      (thrown: unknown) => thrown,
    );
    const elapsed = Date.now() - started;
    expect(error).toBeInstanceOf(ReplicaAckError);
    expect(isFleetcronError(error, 'BACKEND_UNAVAILABLE')).toBe(true);
    expect((error as Error).message).toMatch(
      /0 of 1 replicas acknowledged the write within 300 ms/,
    );
    expect(elapsed).toBeGreaterThanOrEqual(ACK.timeoutMs - 5);
    expect(elapsed).toBeLessThan(ACK.timeoutMs + MARGIN_MS);

    // handed back: no record, no lease; another instance can still claim the fire
    const seen = await plain.inspect('job');
    expect(seen.fires).toEqual([]);
    expect(seen.leases).toEqual([]);
    expect((await plain.claim(request('job', fireAt, 'b'))).status).toBe('won');
  });

  it('a batch with wins fails closed whole and every win is handed back', async () => {
    const prefix = uniquePrefix();
    const lock = await lockOnPrimary(prefix);
    const plain = await lockOnPrimary(prefix, false);
    const fireAt = fireTime();
    // one fire already taken by another owner: lost in the batch, and left as it is
    expect((await plain.claim(request('taken', fireAt, 'b'))).status).toBe('won');
    await pauseReplica();

    const keys = ['k0', 'k1', 'taken', 'k2'];
    const started = Date.now();
    const error = await lock.claimMany(keys.map((key) => request(key, fireAt))).then(
      () => null,
      (thrown: unknown) => thrown,
    );
    expect(error).toBeInstanceOf(ReplicaAckError);
    expect(Date.now() - started).toBeLessThan(ACK.timeoutMs + MARGIN_MS);
    for (const key of ['k0', 'k1', 'k2']) {
      expect((await plain.inspect(key)).fires, key).toEqual([]);
    }
    const taken = await plain.inspect('taken');
    expect(taken.fires.map((fire) => fire.owner)).toEqual(['b']);

    // a batch that wins nothing sends no WAIT: answered at once, as before
    const lost = await lock.claimMany([request('taken', fireAt)]);
    expect(lost.map((result) => result.status)).toEqual(['lost']);
  });

  it('a renewal fails closed with ReplicaAckError; release needs no acknowledgement', async () => {
    const prefix = uniquePrefix();
    const lock = await lockOnPrimary(prefix);
    const won = await lock.claim(request('job', fireTime()));
    if (won.status !== 'won') throw new Error(`claim answered ${won.status}`);
    await pauseReplica();

    await expect(lock.extend(won.lease, 60_000)).rejects.toBeInstanceOf(ReplicaAckError);
    await expect(lock.extendMany([won.lease], [60_000])).rejects.toBeInstanceOf(ReplicaAckError);
    expect(await lock.release(won.lease)).toBe(true);
  });

  it('a scheduler runs nothing while the replica is frozen, and runs again once it acknowledges', async () => {
    const prefix = uniquePrefix();
    const lock = await lockOnPrimary(prefix);
    const instanceId = `ack-${prefix}`;
    const failures: Error[] = [];
    const unsubscribe = subscribe((event: FleetcronEvent) => {
      if (event.instanceId === instanceId && event.type === 'claim.failed') {
        failures.push(event.error);
      }
    });
    const runs: number[] = [];
    const scheduler = new Scheduler({ lock, instanceId, leaseMs: 5_000 });
    scheduler.add({
      name: 'job',
      trigger: every(1000),
      run: (ctx) => void runs.push(ctx.fireAt.getTime()),
    });
    await pauseReplica();
    try {
      scheduler.start();
      await waitFor(() => failures.length >= 2, {
        timeoutMs: 15_000,
        message: 'two claims failed closed',
      });
      expect(runs).toEqual([]);
      for (const failure of failures) expect(failure).toBeInstanceOf(ReplicaAckError);
      expect((await lock.inspect('job')).fires).toEqual([]);

      await (await topology()).resume(REPLICA);
      paused = undefined;
      await waitFor(() => runs.length >= 1, {
        timeoutMs: 15_000,
        message: 'a run once acknowledged',
      });
    } finally {
      unsubscribe();
      await scheduler.stop();
    }
  });
});
