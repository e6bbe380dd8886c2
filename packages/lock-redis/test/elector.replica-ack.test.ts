import {
  Candidate,
  type CandidateEvent,
  InvalidOptionError,
  isFleetcronError,
  NotLeaderError,
} from '@fleetcron/core';
import { type RedisSentinel, startRedisSentinel, waitFor } from '@fleetcron/testkit';
import { fileServer } from '@fleetcron/testkit/vitest';
import { Redis } from 'ioredis';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { electionKeys, RedisElector, ReplicaAckError } from '../src/index.js';
import { clientErrors, uniquePrefix } from './fixture.js';

// RedisElector's replicaAck (#31): a primary and its replica (the testkit's Sentinel topology,
// Sentinels idle here); the replica is frozen with SIGSTOP to make it miss its acknowledgements.

// one Sentinel (fewer processes): nothing fails over in this file. The start takes about 5 s:
// the primary waits repl-diskless-sync-delay (5 s) before the replica's first sync.
const topology = fileServer(() => startRedisSentinel({ sentinels: 1 }));
const REPLICA = 1;
const ACK = { replicas: 1, timeoutMs: 300 } as const;
/**
 * For the steps that must be acknowledged: a healthy replica can take more than 300 ms to answer
 * on 2 loaded cores (seen once at a load average of 10).
 */
const PATIENT_ACK = { replicas: 1, timeoutMs: 4_000 } as const;
/** Slack on top of `ACK.timeoutMs` for a step to fail closed on 2 loaded cores. */
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

/**
 * An elector on the primary (node 0: nothing fails over in this file); `replicaAck` `null`: an
 * elector without the option.
 */
async function electorOnPrimary(
  prefix: string,
  replicaAck: typeof ACK | typeof PATIENT_ACK | null = ACK,
): Promise<RedisElector> {
  return new RedisElector(await nodeClient(0), { prefix, replicaAck: replicaAck ?? undefined });
}

async function pauseReplica(): Promise<void> {
  const ha = await topology();
  await ha.pause(REPLICA);
  paused = ha;
}

async function resumeReplica(): Promise<void> {
  await (await topology()).resume(REPLICA);
  paused = undefined;
}

/** What `promise` rejected with, or `null` when it resolved. */
const rejection = (promise: Promise<unknown>): Promise<unknown> =>
  promise.then(
    () => null,
    (thrown: unknown) => thrown,
  );

describe('RedisElector replicaAck option', () => {
  it('rejects a bad replicaAck at construction with InvalidOptionError naming the field', () => {
    const client = new Redis({ lazyConnect: true });
    opened.push(client);
    const bad: [unknown, string][] = [
      [null, 'replicaAck'],
      [{ replicas: 0, timeoutMs: 100 }, 'replicaAck.replicas'],
      [{ replicas: 1, timeoutMs: 0 }, 'replicaAck.timeoutMs'],
      [{ replicas: 1, timeoutMs: 5_000 }, 'replicaAck.timeoutMs'], // = commandTimeoutMs
    ];
    for (const [replicaAck, field] of bad) {
      let thrown: unknown;
      try {
        new RedisElector(client, { replicaAck: replicaAck as never });
      } catch (error) {
        thrown = error;
      }
      expect(thrown, JSON.stringify(replicaAck)).toBeInstanceOf(InvalidOptionError);
      expect((thrown as InvalidOptionError).field, JSON.stringify(replicaAck)).toBe(field);
    }
    expect(
      () => new RedisElector(client, { commandTimeoutMs: 10_000, replicaAck: ACK }),
    ).not.toThrow();
  });
});

describe('RedisElector replicaAck with a replica that acknowledges (after a pause)', () => {
  it('a win and a renewal are answered once the replica holds them, not before', async () => {
    const prefix = uniquePrefix();
    const elector = await electorOnPrimary(prefix, PATIENT_ACK);
    const primary = await nodeClient(0);
    const replica = await nodeClient(REPLICA);
    const [leaderKey] = electionKeys(prefix, 'e');

    const won = await answeredAfterReplica(
      () => elector.campaign({ election: 'e', id: 'a', ttlMs: 30_000 }),
      async () => (await primary.get(leaderKey)) !== null,
    );
    if (won.status !== 'elected') throw new Error(`campaign answered ${won.status}`);
    // read on the replica right after the answer: WAIT made it hold the term already
    expect(await replica.get(leaderKey)).toBe(`${won.leader.term}|${won.leader.expiresAt}|a`);

    const before = await primary.get(leaderKey);
    const renewed = await answeredAfterReplica(
      () => elector.renew(won.leader, 60_000),
      async () => (await primary.get(leaderKey)) !== before,
    );
    expect(renewed?.expiresAt).toBeGreaterThan(won.leader.expiresAt);
    expect(await replica.get(leaderKey)).toBe(`${won.leader.term}|${renewed?.expiresAt}|a`);

    // a follower's answer wrote nothing and needs no acknowledgement
    const other = await electorOnPrimary(prefix, PATIENT_ACK);
    const follower = await other.campaign({ election: 'e', id: 'b', ttlMs: 30_000 });
    expect(follower.status).toBe('follower');
  });
});

/**
 * Runs `step` with the replica frozen: once `written()` sees its write on the primary, the step
 * must still be unanswered (waiting for the replica); the replica is then resumed and the step's
 * answer returned.
 */
async function answeredAfterReplica<T>(
  step: () => Promise<T>,
  written: () => Promise<boolean>,
): Promise<T> {
  await pauseReplica();
  let answered = false;
  const pending = step().finally(() => {
    answered = true;
  });
  pending.catch(() => {}); // awaited below; not unhandled while the test polls
  await waitFor(written, { timeoutMs: 2_000, intervalMs: 10, message: 'written on the primary' });
  await (await nodeClient(0)).ping(); // one more round trip: a reply sent with the write is in
  expect(answered, 'answered before the replica acknowledged').toBe(false);
  await resumeReplica();
  return pending;
}

describe('RedisElector replicaAck with the replica frozen (SIGSTOP)', () => {
  it('a win fails closed within timeoutMs with ReplicaAckError and is handed back', async () => {
    const prefix = uniquePrefix();
    const elector = await electorOnPrimary(prefix);
    const plain = await electorOnPrimary(prefix, null);
    await pauseReplica();

    const started = Date.now();
    const error = await rejection(elector.campaign({ election: 'e', id: 'a', ttlMs: 30_000 }));
    const elapsed = Date.now() - started;
    expect(error).toBeInstanceOf(ReplicaAckError);
    expect(isFleetcronError(error, 'BACKEND_UNAVAILABLE')).toBe(true);
    expect((error as Error).message).toMatch(/campaign: 0 of 1 replicas acknowledged/);
    expect(elapsed).toBeGreaterThanOrEqual(ACK.timeoutMs - 5);
    expect(elapsed).toBeLessThan(ACK.timeoutMs + MARGIN_MS);

    // handed back: no leader, and another candidate is elected at once (not after 30 s)
    expect(await plain.leader('e')).toBeNull();
    const next = await plain.campaign({ election: 'e', id: 'b', ttlMs: 30_000 });
    expect(next.status).toBe('elected');
  });

  it('a renewal fails closed with ReplicaAckError; resign needs no acknowledgement', async () => {
    const prefix = uniquePrefix();
    const elector = await electorOnPrimary(prefix);
    const patient = await electorOnPrimary(prefix, PATIENT_ACK);
    const won = await patient.campaign({ election: 'e', id: 'a', ttlMs: 30_000 });
    if (won.status !== 'elected') throw new Error(`campaign answered ${won.status}`);
    await pauseReplica();

    const error = await rejection(elector.renew(won.leader, 60_000));
    expect(error).toBeInstanceOf(ReplicaAckError);
    expect((error as Error).message).toMatch(/renew: 0 of 1 replicas acknowledged/);
    // resign needs no acknowledgement: answered at once while the replica is still frozen
    expect(await elector.resign(won.leader)).toBe(true);
  });

  it('a Candidate loses its term when renewals go unacknowledged, and is not elected again until the replica acknowledges', async () => {
    const prefix = uniquePrefix();
    const elector = await electorOnPrimary(prefix);
    const ttlMs = 3_000;
    const candidate = new Candidate({ elector, election: 'e', id: 'a', ttlMs });
    const events: CandidateEvent[] = [];
    candidate.onChange((event) => events.push(event));
    candidate.start();
    try {
      await waitFor(() => candidate.isLeader, { timeoutMs: 10_000, message: 'elected' });
      const leadership = candidate.assertLeader();
      await pauseReplica();

      // every renewal now fails closed: the term ends at its local deadline
      await waitFor(() => leadership.signal.aborted, {
        timeoutMs: ttlMs + MARGIN_MS,
        message: 'the term lost',
      });
      const lost = events.find((event) => event.type === 'lost');
      if (lost?.type !== 'lost') throw new Error('no lost event');
      expect(lost.reason).toBe('deadline');
      expect(lost.error).toBeInstanceOf(NotLeaderError);
      expect(lost.error.cause).toBeInstanceOf(ReplicaAckError);
      const lostAt = events.indexOf(lost);

      // campaigning goes on: each win is handed back, never taken as leadership
      await waitFor(
        () =>
          events
            .slice(lostAt)
            .filter(
              (event) =>
                event.type === 'error' && /campaign: 0 of 1 replicas/.test(event.error.message),
            ).length >= 2,
        { timeoutMs: 15_000, message: 'two campaigns failed closed' },
      );
      expect(events.slice(lostAt).filter((event) => event.type === 'elected')).toEqual([]);
      expect(candidate.isLeader).toBe(false);

      await resumeReplica();
      await waitFor(() => candidate.isLeader, {
        timeoutMs: 15_000,
        message: 'elected once acknowledged',
      });
    } finally {
      await candidate.resign();
    }
  });
});
