import { type ClaimRequest, isFleetcronError } from '@fleetcron/core';
import { ReplyDroppingProxy, waitFor } from '@fleetcron/testkit';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { RedisLock } from '../src/index.js';
import { clientErrors, dedicatedServer, uniquePrefix } from './fixture.js';

// "A claim given up on" (README): once ClaimRequest.signal is aborted, a claim still queued in
// ioredis (offline queue while disconnected, or written and then cut, re-sent after reconnect)
// can no longer take effect. Each test also runs an identical claim without an aborted signal
// through the same queue, which does take effect: the difference is the signal alone.

const server = dedicatedServer();
const opened: Redis[] = [];
const proxies: ReplyDroppingProxy[] = [];
afterAll(async () => {
  for (const client of opened) client.disconnect();
  for (const proxy of proxies) await proxy.close();
  await server.close();
});

/** A client that keeps commands queued while disconnected and reconnects quickly. */
function queueingClient(url: string): Redis {
  const client = new Redis(url, {
    maxRetriesPerRequest: null,
    retryStrategy: () => 50,
    autoResendUnfulfilledCommands: true,
    enableOfflineQueue: true,
  });
  client.on('error', (error: Error) => clientErrors.push(error));
  opened.push(client);
  return client;
}

const req = (fireAt: number, owner: string, signal?: AbortSignal): ClaimRequest => ({
  key: 'given-up',
  fireAt,
  owner,
  leaseMs: 30_000,
  exclusive: false,
  ...(signal ? { signal } : {}),
});

const settle = <T>(promise: Promise<T>) =>
  promise.then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  );

async function expectUnclaimedAndFree(lock: RedisLock, other: RedisLock, fireAt: number) {
  const seen = await lock.inspect('given-up');
  expect(
    seen.fires.map((f) => f.fireAt),
    'the given-up claim left no claim record',
  ).not.toContain(fireAt);
  const next = await other.claim(req(fireAt, 'other'));
  expect(next.status, 'another instance can still claim the fire').toBe('won');
}

describe('RedisLock: a claim given up on never takes effect later', () => {
  it('is not sent from the offline queue once the connection is back', async () => {
    const redis = await server.get();
    const proxy = await ReplyDroppingProxy.start(redis.url);
    proxies.push(proxy);
    const client = queueingClient(proxy.url);
    const prefix = uniquePrefix();
    const lock = new RedisLock(client, { prefix, commandTimeoutMs: 60_000 });
    const other = new RedisLock(queueingClient(redis.url), { prefix });
    const t = Date.now() - 1000;
    expect((await lock.claim(req(t, 'warm'))).status).toBe('won'); // the script is cached

    proxy.refuseConnections = true;
    proxy.cutAll();
    await waitFor(() => client.status !== 'ready', { timeoutMs: 10_000, intervalMs: 10 });
    const controller = new AbortController();
    const givenUp = settle(lock.claim(req(t + 1, 'me', controller.signal)));
    const kept = settle(lock.claim(req(t + 2, 'me')));
    const queued = (client as unknown as { offlineQueue: { length: number } }).offlineQueue;
    expect(queued.length, 'both claims wait in the offline queue').toBe(2);
    controller.abort();
    const outcome = await givenUp;
    expect(
      'error' in outcome && isFleetcronError(outcome.error, 'BACKEND_UNAVAILABLE'),
      `the given-up claim rejects with BackendUnavailableError, got ${JSON.stringify(outcome)}`,
    ).toBe(true);

    proxy.refuseConnections = false;
    expect(await kept, 'the queued claim that was not given up on ran').toMatchObject({
      value: { status: 'won' },
    });
    await expectUnclaimedAndFree(lock, other, t + 1);
  }, 60_000);

  it('is not sent after a server restart (nor its EVAL fallback for NOSCRIPT)', async () => {
    const redis = await server.get();
    const client = queueingClient(redis.url);
    const prefix = uniquePrefix();
    const lock = new RedisLock(client, { prefix, commandTimeoutMs: 60_000 });
    const other = new RedisLock(queueingClient(redis.url), { prefix });
    const t = Date.now() - 1000;
    expect((await lock.claim(req(t, 'warm'))).status).toBe('won');

    await redis.stop();
    await waitFor(() => client.status !== 'ready', { timeoutMs: 10_000, intervalMs: 20 });
    const controller = new AbortController();
    const givenUp = settle(lock.claim(req(t + 1, 'me', controller.signal)));
    const kept = settle(lock.claim(req(t + 2, 'me')));
    controller.abort();
    const outcome = await givenUp;
    expect(
      'error' in outcome && isFleetcronError(outcome.error, 'BACKEND_UNAVAILABLE'),
      `the given-up claim rejects with BackendUnavailableError, got ${JSON.stringify(outcome)}`,
    ).toBe(true);

    await redis.start();
    const control = await kept;
    expect(control, 'the queued claim that was not given up on ran after reconnect').toMatchObject({
      value: { status: 'won' },
    });
    await expectUnclaimedAndFree(lock, other, t + 1);
  }, 60_000);

  it('is not re-sent after a reconnect once given up on', async () => {
    const redis = await server.get();
    const proxy = await ReplyDroppingProxy.start(redis.url);
    proxies.push(proxy);
    const client = queueingClient(proxy.url);
    const prefix = uniquePrefix();
    const lock = new RedisLock(client, { prefix, commandTimeoutMs: 60_000 });
    const other = new RedisLock(queueingClient(redis.url), { prefix });
    const t = Date.now() - 1000;
    expect((await lock.claim(req(t, 'warm'))).status).toBe('won');

    // Written by the client, lost on the way: ioredis re-sends both after the reconnect.
    proxy.swallowRequests = true;
    const controller = new AbortController();
    const givenUp = settle(lock.claim(req(t + 1, 'me', controller.signal)));
    const kept = settle(lock.claim(req(t + 2, 'me')));
    await waitFor(() => client.commandQueue.length >= 2, { timeoutMs: 10_000, intervalMs: 10 });
    controller.abort();
    proxy.swallowRequests = false;
    proxy.cutAll();

    const outcome = await givenUp;
    expect(
      'error' in outcome && isFleetcronError(outcome.error, 'BACKEND_UNAVAILABLE'),
      `the given-up claim rejects with BackendUnavailableError, got ${JSON.stringify(outcome)}`,
    ).toBe(true);
    expect(await kept, 'the re-sent claim that was not given up on ran').toMatchObject({
      value: { status: 'won' },
    });
    await expectUnclaimedAndFree(lock, other, t + 1);
  }, 60_000);
});
