import { isFleetcronError } from '@fleetcron/core';
import { uniquePrefix } from '@fleetcron/testkit';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, inject, it } from 'vitest';
import {
  callRedis,
  DEFAULT_COMMAND_TIMEOUT_MS,
  guardErrorEvents,
  RedisCommands,
  RedisScript,
  resolveCommandTimeoutMs,
  withTimeout,
} from '../src/index.js';

const clients: Redis[] = [];
/** A client of the shared server (testkit global setup) with its own connection. */
function newClient(url: string = inject('fleetcronRedisUrl')): Redis {
  const client = new Redis(url, { maxRetriesPerRequest: 1, lazyConnect: true });
  clients.push(client);
  return client;
}
afterAll(() => {
  for (const client of clients) client.disconnect();
});

const prefix = uniquePrefix('redis_shared');
const echo = new RedisScript(
  "redis.call('SET', KEYS[1], ARGV[1]); return redis.call('GET', KEYS[1])",
);

describe('RedisScript on a real server', () => {
  it('runs, and falls back to EVAL after SCRIPT FLUSH (NOSCRIPT)', async () => {
    const client = newClient();
    client.on('error', () => {});
    expect(echo.sha).toMatch(/^[0-9a-f]{40}$/);
    expect(await echo.run(client, [`{${prefix}}:a`], ['one'])).toBe('one');
    await client.script('FLUSH');
    expect(await echo.run(client, [`{${prefix}}:a`], ['two'])).toBe('two');
    // EVAL loaded it again: EVALSHA works directly now.
    expect(await client.evalsha(echo.sha, 1, `{${prefix}}:a`, 'three')).toBe('three');
    await client.del(`{${prefix}}:a`);
  });

  it('passes script errors through', async () => {
    const client = newClient();
    client.on('error', () => {});
    const broken = new RedisScript("return redis.call('NOSUCHCOMMAND')");
    await expect(broken.run(client, [], [])).rejects.toThrow();
  });
});

describe('guardErrorEvents', () => {
  it('adds one no-op listener to a client without one, and none otherwise', () => {
    const bare = newClient();
    guardErrorEvents(bare);
    guardErrorEvents(bare);
    expect(bare.listenerCount('error')).toBe(1);
    const listened = newClient();
    listened.on('error', () => {});
    guardErrorEvents(listened);
    expect(listened.listenerCount('error')).toBe(1);
  });
});

describe('callRedis / withTimeout', () => {
  it('resolves a command within the timeout', async () => {
    const client = newClient();
    client.on('error', () => {});
    expect(await callRedis('ping', 5000, () => client.ping())).toBe('PONG');
  });

  it('turns a timeout into BackendUnavailableError naming the operation', async () => {
    const never = new Promise<never>(() => {});
    const error = await callRedis('claim', 50, () => never).catch((e) => e);
    expect(isFleetcronError(error, 'BACKEND_UNAVAILABLE')).toBe(true);
    expect((error as Error).message).toContain('claim');
    expect(((error as Error).cause as Error).message).toContain('timed out after 50 ms');
  });

  it('turns an unreachable server into BackendUnavailableError', async () => {
    const dead = newClient('redis://127.0.0.1:1');
    guardErrorEvents(dead);
    const error = await callRedis('ping', 5000, () => dead.ping()).catch((e) => e);
    expect(isFleetcronError(error, 'BACKEND_UNAVAILABLE')).toBe(true);
  });

  it('keeps the late rejection of the loser handled', async () => {
    let reject: (error: Error) => void = () => {};
    const late = new Promise<never>((_, r) => {
      reject = r;
    });
    await expect(withTimeout(late, 20, 'late')).rejects.toThrow('late timed out');
    reject(new Error('too late')); // would be an unhandled rejection without the race's handler
    await new Promise((resolve) => setImmediate(resolve));
  });

  it('validates commandTimeoutMs', () => {
    expect(resolveCommandTimeoutMs(undefined)).toBe(DEFAULT_COMMAND_TIMEOUT_MS);
    expect(resolveCommandTimeoutMs(250)).toBe(250);
    expect(() => resolveCommandTimeoutMs(0)).toThrow(/commandTimeoutMs/);
  });
});

describe('RedisCommands', () => {
  it('guards the client and runs operations under its timeout', async () => {
    const client = newClient();
    const commands = new RedisCommands(client, 5000);
    expect(client.listenerCount('error')).toBe(1);
    expect(await commands.call('ping', () => client.ping())).toBe('PONG');
    const error = await commands.call('boom', () => client.call('NOSUCHCOMMAND')).catch((e) => e);
    expect(isFleetcronError(error, 'BACKEND_UNAVAILABLE')).toBe(true);
    expect((error as Error).message).toContain('boom');
  });
});
