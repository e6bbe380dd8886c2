import { ReplyDroppingProxy, waitFor } from '@fleetcron/testkit';
import type { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { fleetKeys, RedisStore } from '../src/index.js';
import { newClient, sharedUrl, uniquePrefix } from './fixture.js';

// Exactly-once run requests beyond the conformance suite: replies lost on a real connection cut
// (ReplyDroppingProxy: the script runs, the connection is cut before its answer gets back, ioredis
// re-sends it), requests written by 0.1.0, release announced on pub/sub, decided ones collected.

const opened: Redis[] = [];
const proxies: ReplyDroppingProxy[] = [];
afterAll(async () => {
  for (const client of opened.splice(0)) client.disconnect();
  for (const proxy of proxies.splice(0)) await proxy.close();
});

function store(url: string, prefix: string): RedisStore {
  const client = newClient(url);
  opened.push(client);
  return new RedisStore(client, { prefix });
}

/** A store whose connection goes through a proxy that can lose a reply, and a direct one. */
async function storesWithProxy(): Promise<{
  proxy: ReplyDroppingProxy;
  viaProxy: RedisStore;
  direct: RedisStore;
  prefix: string;
}> {
  const proxy = await ReplyDroppingProxy.start(sharedUrl());
  proxies.push(proxy);
  const prefix = uniquePrefix();
  const viaProxy = store(proxy.url, prefix);
  await viaProxy.getRunRequest('warm-up'); // connection ready, the script loaded
  return { proxy, viaProxy, direct: store(sharedUrl(), prefix), prefix };
}

describe('RedisStore run requests', () => {
  it('a decision whose reply is lost is re-sent and answered true; decided once', async () => {
    const { proxy, viaProxy, direct } = await storesWithProxy();
    const request = await direct.requestRun({ job: 'lost-decision', requestedBy: 'test' });
    const [taken] = await viaProxy.takeRunRequests(['lost-decision'], 'inst-a');
    expect(taken?.id).toBe(request.id);
    const decision = { fireAt: 1_700_000_000_321, instanceId: 'inst-a' };

    proxy.dropNextReply = true;
    const answer = await viaProxy.decideRunRequest(request.id, taken!.takeId, decision);
    expect(proxy.dropped, 'the reply of the decision was lost').toBe(1);
    expect(answer, 'the re-sent decision of the same take is answered true').toBe(true);
    expect(
      await viaProxy.decideRunRequest(request.id, taken!.takeId, decision),
      'and again when the caller retries',
    ).toBe(true);
    const state = await direct.getRunRequest(request.id);
    expect(state).toMatchObject({ state: 'decided', takes: 1, decidedBy: 'inst-a' });
    expect(state?.fireAt).toBe(decision.fireAt);
    expect(await direct.takeRunRequests(['lost-decision'], 'inst-b'), 'never taken again').toEqual(
      [],
    );
  });

  it('a take whose reply is lost holds the request until its lease ends; then another takes it', async () => {
    const { proxy, viaProxy, direct } = await storesWithProxy();
    const request = await direct.requestRun({ job: 'lost-take', requestedBy: 'test' });
    // long enough that the re-send surely comes before the lease ends, even on a loaded machine
    const leaseMs = 3_000;

    proxy.dropNextReply = true;
    const resent = await viaProxy.takeRunRequests(['lost-take'], 'inst-a', { leaseMs });
    expect(proxy.dropped, 'the reply of the take was lost').toBe(1);
    expect(resent, 'the re-sent take finds the request held by the lost one').toEqual([]);
    const held = await direct.getRunRequest(request.id);
    expect(held, 'held by the lost take').toMatchObject({ takes: 1, takenBy: 'inst-a' });
    expect(held?.takenUntil).toBeGreaterThanOrEqual(request.requestedAt + leaseMs);

    const retaken = await waitFor(
      async () => {
        const got = await direct.takeRunRequests(['lost-take'], 'inst-b');
        return got.length > 0 ? { got, at: Date.now() } : undefined;
      },
      { timeoutMs: 15_000, intervalMs: 50, message: 'the request taken again after the lease' },
    );
    expect(retaken.got.map((r) => r.id)).toEqual([request.id]);
    expect(retaken.got[0]!.takes, 'the lost take counted').toBe(2);
    // same machine: the Redis clock and ours agree within a few ms
    expect(retaken.at, 'not taken before the lost take ended').toBeGreaterThanOrEqual(
      held!.takenUntil! - 50,
    );
    expect(await direct.decideRunRequest(request.id, retaken.got[0]!.takeId, decisionOf('b'))).toBe(
      true,
    );
  });

  it('a request written by 0.1.0 (the request list) is taken as pending, in order, and decided', async () => {
    const url = sharedUrl();
    const prefix = uniquePrefix();
    const keys = fleetKeys(prefix);
    const raw = newClient(url);
    opened.push(raw);
    // what 0.1.0's requestRun wrote: `<seq>|<requestedAt>|<JSON [id, job, requestedBy]>`
    const seq = await raw.incr(keys.sequence);
    const old = { id: 'old-request-1', job: 'upgraded', requestedBy: 'cli', requestedAt: 1_234 };
    await raw.rpush(
      keys.requests('upgraded'),
      `${seq}|${old.requestedAt}|${JSON.stringify([old.id, old.job, old.requestedBy])}`,
    );
    const s = store(url, prefix);
    const fresh = await s.requestRun({ job: 'upgraded', requestedBy: 'ui', data: { n: 1 } });

    const taken = await s.takeRunRequests(['upgraded'], 'inst-a');
    expect(
      taken.map(({ id, job, requestedBy, requestedAt, data }) => ({
        ...{ id, job, requestedBy, requestedAt, data },
      })),
    ).toEqual([{ ...old, data: null }, fresh]);
    expect(await raw.exists(keys.requests('upgraded')), 'the old list is gone').toBe(0);
    expect(await s.decideRunRequest(old.id, taken[0]!.takeId, decisionOf('a'))).toBe(true);
    expect(await s.getRunRequest(old.id)).toMatchObject({ ...old, state: 'decided', takes: 1 });
    expect(await s.takeRunRequests(['upgraded'], 'inst-b'), 'not taken twice').toEqual([]);
  });

  it('a release wakes watchers (pub/sub) like a new request', async () => {
    const prefix = uniquePrefix();
    const listening = store(sharedUrl(), prefix);
    const writer = store(sharedUrl(), prefix);
    const woken: string[] = [];
    const unsubscribe = listening.watchRunRequests((job) => woken.push(job));
    try {
      // the subscription takes effect asynchronously: request until one message arrives
      await waitFor(
        async () => {
          await writer.requestRun({ job: 'released', requestedBy: 'test' });
          return woken.includes('released');
        },
        { timeoutMs: 15_000, intervalMs: 100, message: 'a message for a new request' },
      );
      const taken = await writer.takeRunRequests(['released'], 'inst-a');
      expect(taken.length).toBeGreaterThan(0);
      woken.length = 0;
      await writer.releaseRunRequest(taken[0]!.id, taken[0]!.takeId);
      await waitFor(() => woken.includes('released'), {
        timeoutMs: 10_000,
        message: 'a message for the released request',
      });
    } finally {
      unsubscribe();
      await listening.close();
    }
  });

  it('decided requests are collected by a take once older than an hour, not before', async () => {
    const url = sharedUrl();
    const prefix = uniquePrefix();
    const keys = fleetKeys(prefix);
    const s = store(url, prefix);
    const [a, b] = [
      await s.requestRun({ job: 'collected', requestedBy: 'test' }),
      await s.requestRun({ job: 'collected', requestedBy: 'test' }),
    ];
    for (const taken of await s.takeRunRequests(['collected'], 'inst-a')) {
      expect(await s.decideRunRequest(taken.id, taken.takeId, decisionOf('a'))).toBe(true);
    }
    // `a` decided 2 h ago by the Redis clock (its score in the decided set), `b` just now
    const raw = newClient(url);
    opened.push(raw);
    const decidedAt = Number(await raw.zscore(keys.decidedRequests, a.id));
    await raw.zadd(keys.decidedRequests, decidedAt - 2 * 60 * 60 * 1000, a.id);
    await s.takeRunRequests(['other-job'], 'inst-a');
    expect(await s.getRunRequest(a.id), 'collected').toBeNull();
    expect((await s.getRunRequest(b.id))?.state, 'kept').toBe('decided');
    expect(await raw.zscore(keys.decidedRequests, a.id)).toBeNull();
  });
});

function decisionOf(instance: string): { fireAt: number; instanceId: string } {
  return { fireAt: 1_700_000_000_000, instanceId: `inst-${instance}` };
}
