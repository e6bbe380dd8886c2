import { type Execution, InvalidOptionError, isFleetcronError } from '@fleetcron/core';
import { compareNewestFirst } from '@fleetcron/core/backend';
import { startRedis } from '@fleetcron/testkit';
import type { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { encodeKeyPart, fleetKeys, RedisStore, registryKey, storeKeys } from '../src/index.js';
import { newClient, sharedUrl, uniquePrefix } from './fixture.js';

const opened: Redis[] = [];
afterAll(async () => {
  for (const client of opened) client.disconnect();
});

async function client(url?: string): Promise<Redis> {
  const c = newClient(url ?? sharedUrl());
  opened.push(c);
  return c;
}

function execution(job: string, id: string, startedAt: number, over: Partial<Execution> = {}) {
  return {
    id,
    job,
    fireAt: startedAt,
    status: 'succeeded',
    attempt: 1,
    instanceId: 'i1',
    token: 7,
    startedAt,
    finishedAt: startedAt + 5,
    error: null,
    requestedBy: null,
    ...over,
  } satisfies Execution;
}

async function allPages(store: RedisStore, job: string, limit: number): Promise<Execution[]> {
  const out: Execution[] = [];
  let cursor: string | null = null;
  do {
    const page = await store.history(job, { limit, cursor });
    expect(page.executions.length).toBeLessThanOrEqual(limit);
    out.push(...page.executions);
    cursor = page.nextCursor;
  } while (cursor);
  return out;
}

describe('options', () => {
  it('rejects bad options at construction with InvalidOptionError naming the field', async () => {
    const c = await client();
    const bad: [object, string][] = [
      [{ prefix: 'x}' }, 'prefix'],
      [{ maxHistory: 0 }, 'maxHistory'],
      [{ maxHistory: 2.5 }, 'maxHistory'],
      [{ maxAgeMs: -5 }, 'maxAgeMs'],
      [{ maxErrorLength: 0 }, 'maxErrorLength'],
      [{ commandTimeoutMs: 0 }, 'commandTimeoutMs'],
    ];
    for (const [options, field] of bad) {
      let thrown: unknown;
      try {
        new RedisStore(c, options);
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(InvalidOptionError);
      expect((thrown as InvalidOptionError).field).toBe(field);
    }
    const store = new RedisStore(c, { prefix: uniquePrefix() });
    await expect(store.record(execution('j', 'a', -1))).rejects.toBeInstanceOf(InvalidOptionError);
    await expect(store.history('j', { cursor: 'garbage!' })).rejects.toBeInstanceOf(
      InvalidOptionError,
    );
  });
});

describe('ordering and pages', () => {
  it('orders exactly by (startedAt desc, id desc), ties included, across cursor pages', async () => {
    const store = new RedisStore(await client(), { prefix: uniquePrefix() });
    const job = 'ties {and} braces';
    const rows: Execution[] = [];
    const ids = ['a', 'b', 'B', 'a-1', 'z', '0', 'ab', 'aa', 'é', '~'];
    for (const [i, id] of ids.entries()) {
      for (const startedAt of [1000, 1000 + (i % 3), 999_999_999_999]) {
        rows.push(execution(job, `${id}@${startedAt}`, startedAt));
        rows.push(
          execution(job, `${id}`, startedAt === 1000 ? 2000 : startedAt, {
            id: `${id}#${startedAt}`,
          }),
        );
      }
    }
    const unique = [...new Map(rows.map((r) => [r.id, r])).values()];
    await Promise.all(unique.map((r) => store.record(r)));
    const expected = [...unique].sort(compareNewestFirst);
    for (const limit of [1, 3, 7, 100]) {
      expect(await allPages(store, job, limit)).toEqual(expected);
    }
  });

  it('moves an execution in the index when a re-record changes its startedAt', async () => {
    const store = new RedisStore(await client(), { prefix: uniquePrefix() });
    await store.record(execution('j', 'x', 100, { status: 'running', finishedAt: null }));
    await store.record(execution('j', 'y', 200));
    await store.record(execution('j', 'x', 300));
    const page = await store.history('j');
    expect(page.executions.map((e) => [e.id, e.startedAt])).toEqual([
      ['x', 300],
      ['y', 200],
    ]);
  });
});

describe('bounded memory', () => {
  it('keeps at most maxHistory executions per job: index and records trimmed together', async () => {
    const c = await client();
    const prefix = uniquePrefix();
    const store = new RedisStore(c, { prefix, maxHistory: 25 });
    for (let i = 0; i < 300; i++) await store.record(execution('busy', `id-${i}`, 10_000 + i));
    const keys = storeKeys(prefix, 'busy');
    expect(await c.zcard(keys.index)).toBe(25);
    expect(await c.hlen(keys.executions)).toBe(25);
    const kept = await allPages(store, 'busy', 10);
    expect(kept.map((e) => e.id)).toEqual(Array.from({ length: 25 }, (_, i) => `id-${299 - i}`));
  });

  it('maxAgeMs drops executions older than it by the Redis clock and lets idle history expire', async () => {
    const c = await client();
    const prefix = uniquePrefix();
    const store = new RedisStore(c, { prefix, maxAgeMs: 60_000 });
    const now = Date.now();
    await store.record(execution('aged', 'old', now - 120_000));
    await store.record(execution('aged', 'new', now));
    expect((await store.history('aged')).executions.map((e) => e.id)).toEqual(['new']);
    const keys = storeKeys(prefix, 'aged');
    const ttl = await c.pttl(keys.index);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(60_000);
    expect(await c.pttl(keys.executions)).toBeGreaterThan(0);
    await store.setPaused('aged', true);
    expect(await c.pttl(keys.state)).toBe(-1); // job state never expires
  });

  it('prune(before) removes older executions of every job and reports the count', async () => {
    const c = await client();
    const prefix = uniquePrefix();
    const store = new RedisStore(c, { prefix });
    const jobs = ['a', 'b/c', '{d}', 'ünï'];
    for (const job of jobs) {
      for (let i = 0; i < 10; i++) await store.record(execution(job, `${job}-${i}`, 1000 + i));
    }
    expect(await store.prune(1005)).toBe(20);
    expect(await store.prune(1005)).toBe(0);
    for (const job of jobs) {
      const left = await allPages(store, job, 4);
      expect(left.map((e) => e.startedAt)).toEqual([1009, 1008, 1007, 1006, 1005]);
    }
    expect(await store.prune(Number.MAX_SAFE_INTEGER)).toBe(20);
    expect(await c.smembers(registryKey(prefix))).toEqual(expect.arrayContaining(jobs));
  });
});

describe('job state and key layout', () => {
  it('updates last* on terminal records only, keeps paused, and uses one hash tag per job', async () => {
    const c = await client();
    const prefix = uniquePrefix();
    const store = new RedisStore(c, { prefix });
    const job = 'x}{y';
    expect(await store.getJobState(job)).toEqual({
      job,
      paused: false,
      pausedBy: null,
      pausedAt: null,
      lastStatus: null,
      lastFireAt: null,
      lastFinishedAt: null,
    });
    await store.setPaused(job, true);
    await store.record(execution(job, 'r', 500, { status: 'running', finishedAt: null }));
    expect((await store.getJobState(job)).lastStatus).toBeNull();
    await store.record(execution(job, 'r', 500, { status: 'failed', error: 'boom', fireAt: 490 }));
    expect(await store.getJobState(job)).toMatchObject({
      job,
      paused: true,
      pausedBy: null,
      lastStatus: 'failed',
      lastFireAt: 490,
      lastFinishedAt: 505,
    });
    const keys = await c.keys(`{${prefix}:*`);
    expect(keys.sort()).toEqual(Object.values(storeKeys(prefix, job)).sort());
    for (const key of keys) expect(key.startsWith(`{${prefix}:${encodeKeyPart(job)}}:`)).toBe(true);
  });
});

describe('pause state and its audit entry', () => {
  it('one script in the fleet slot; a pause written by an older store still reads until changed', async () => {
    const c = await client();
    const prefix = uniquePrefix();
    const store = new RedisStore(c, { prefix });
    // 0.1 kept the pause in the job's own state hash (and registered the job)
    await c.sadd(registryKey(prefix), 'legacy');
    await c.hset(
      storeKeys(prefix, 'legacy').state,
      'paused',
      '1',
      'pausedBy',
      'old',
      'pausedAt',
      '123',
    );
    expect(await store.getJobState('legacy')).toMatchObject({
      paused: true,
      pausedBy: 'old',
      pausedAt: 123,
    });
    expect((await store.listJobs()).map((j) => j.job)).toEqual(['legacy']);
    await store.setPaused('legacy', false, { by: 'new', note: 'back' });
    expect(await store.getJobState('legacy')).toMatchObject({ paused: false, pausedBy: null });
    const before = Date.now();
    await store.setPaused('legacy', true, { by: 'a|b' });
    const state = await store.getJobState('legacy');
    expect(state).toMatchObject({ paused: true, pausedBy: 'a|b' });
    expect(state.pausedAt).toBeGreaterThanOrEqual(before - 5_000);
    expect(await c.hget(fleetKeys(prefix).paused, 'legacy')).toBe(`1|${state.pausedAt}|a|b`);
    const entries = (await store.listAudit({ job: 'legacy' })).entries;
    expect(entries.map((e) => [e.action, e.by, e.note, e.at])).toEqual([
      ['pause', 'a|b', null, state.pausedAt],
      ['resume', 'new', 'back', expect.any(Number)],
    ]);
  });
});

describe('failures', () => {
  it('a stopped or frozen server gives BackendUnavailableError, then recovers', async () => {
    const server = await startRedis({ strategy: 'managed' });
    try {
      const store = new RedisStore(await client(server.url), {
        prefix: uniquePrefix(),
        commandTimeoutMs: 500,
      });
      await store.record(execution('f', 'a', 1));
      await server.pause();
      const frozen = await store.history('f').catch((e: unknown) => e);
      expect(isFleetcronError(frozen, 'BACKEND_UNAVAILABLE')).toBe(true);
      await server.resume();
      await server.stop();
      const stopped = await store.record(execution('f', 'b', 2)).catch((e: unknown) => e);
      expect(isFleetcronError(stopped, 'BACKEND_UNAVAILABLE')).toBe(true);
      const batch = await store.recordMany([execution('f', 'b', 2)]).catch((e: unknown) => e);
      expect(isFleetcronError(batch, 'BACKEND_UNAVAILABLE'), 'recordMany, server stopped').toBe(
        true,
      );
      await server.start();
      const deadline = Date.now() + 20_000;
      for (;;) {
        try {
          await store.record(execution('f', 'c', 3));
          break;
        } catch (error) {
          if (Date.now() > deadline) throw error;
          await new Promise((r) => setTimeout(r, 100));
        }
      }
      expect((await store.history('f')).executions.map((e) => e.id)).toContain('c');
    } finally {
      await server.close();
    }
  });
});
