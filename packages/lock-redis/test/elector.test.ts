import { isFleetcronError } from '@fleetcron/core';
import { afterAll, describe, expect, it } from 'vitest';
import { electionKeys, RedisElector } from '../src/index.js';
import { newClient, sharedUrl, uniquePrefix } from './fixture.js';

const clients: ReturnType<typeof newClient>[] = [];
afterAll(() => {
  for (const c of clients) c.disconnect();
});

describe('RedisElector', () => {
  it('bad options throw InvalidOptionError naming the field, at construction', () => {
    const client = newClient(sharedUrl());
    clients.push(client);
    const bad: [Record<string, unknown>, string][] = [
      [{ prefix: 'a{b' }, 'prefix'],
      [{ commandTimeoutMs: 0 }, 'commandTimeoutMs'],
      [{ durable: 'yes' }, 'durable'],
    ];
    for (const [options, field] of bad) {
      let caught: unknown;
      try {
        new RedisElector(client, options as never);
      } catch (error) {
        caught = error;
      }
      expect(isFleetcronError(caught, 'INVALID_OPTION'), String(caught)).toBe(true);
      expect((caught as { field?: string }).field).toBe(field);
    }
  });

  it('keeps the term counter after the leader key expired, and terms follow Redis time', async () => {
    const client = newClient(sharedUrl());
    clients.push(client);
    const prefix = uniquePrefix();
    const elector = new RedisElector(client, { prefix });
    const first = await elector.campaign({ election: 'e', id: 'a', ttlMs: 50 });
    if (first.status !== 'elected') throw new Error('not elected');
    const [leaderKey, termKey] = electionKeys(prefix, 'e');
    expect(await client.get(termKey)).toBe(String(first.leader.term));
    expect(await client.pttl(leaderKey)).toBeGreaterThan(0);
    await client.del(termKey); // a lost counter (restart without persistence)
    const second = await elector.campaign({ election: 'e', id: 'a', ttlMs: 50 });
    expect(second.status).toBe('elected');
    expect(second.leader.term).toBeGreaterThan(first.leader.term);
    const [seconds] = await client.time();
    expect(Math.floor(first.leader.term / 1e6)).toBeLessThanOrEqual(Number(seconds));
  });
});
