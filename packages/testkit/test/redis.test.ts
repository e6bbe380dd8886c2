import { Redis, type RedisOptions } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { startRedis } from '../src/redis.js';
import type { RedisServer } from '../src/types.js';
import { waitFor } from '../src/wait.js';
import { existsSync, groupMembers, pgrep, waitServerGone } from './helpers.js';

const clients: Redis[] = [];
const servers: RedisServer[] = [];

/** An ioredis client whose errors are recorded instead of crashing the run. */
function client(server: RedisServer, options: RedisOptions = {}) {
  const c = new Redis(server.url, { maxRetriesPerRequest: 1, retryStrategy: () => 50, ...options });
  const errors: Error[] = [];
  c.on('error', (e: Error) => errors.push(e));
  clients.push(c);
  return Object.assign(c, { errors });
}

async function start(appendOnly = false): Promise<RedisServer> {
  const server = await startRedis({ appendOnly, strategy: 'managed' });
  servers.push(server);
  return server;
}

afterAll(async () => {
  for (const c of clients) c.disconnect();
  await Promise.all(servers.map((s) => s.close()));
});

describe('startRedis (local)', () => {
  it('starts a server on 127.0.0.1 that answers', async () => {
    const server = await start();
    expect(server.kind).toBe('redis');
    expect(server.strategy).toBe('local');
    expect(server.url).toBe(`redis://127.0.0.1:${server.port}`);
    expect(server.version).toMatch(/^\d+\.\d+/);
    expect(server.state).toBe('running');
    const c = client(server);
    await c.set('k', 'v');
    expect(await c.get('k')).toBe('v');
  });

  it('loses keys across a restart without appendOnly', async () => {
    const server = await start(false);
    const c = client(server);
    await c.set('k', 'v');
    const port = server.port;
    await server.stop();
    expect(server.state).toBe('stopped');
    await server.start();
    expect(server.port).toBe(port);
    await waitFor(async () => (await c.dbsize()) === 0, { message: 'empty after restart' });
    expect(await c.get('k')).toBeNull();
  });

  it('keeps keys across stop/start and a crash restart with appendOnly', async () => {
    const server = await start(true);
    const c = client(server);
    await c.set('k', 'v1');
    await server.stop();
    await server.start();
    expect(await waitFor(() => c.get('k'), { message: 'k after restart' })).toBe('v1');
    await c.set('k', 'v2');
    await server.restart({ crash: true });
    expect(await waitFor(() => c.get('k'), { message: 'k after crash' })).toBe('v2');
  });

  it('pause makes commands time out; resume recovers', async () => {
    const server = await start();
    const c = client(server, { commandTimeout: 300 });
    await c.set('k', 'v');
    await server.pause();
    expect(server.state).toBe('paused');
    const pid = server.pid as number;
    expect(groupMembers(pid).every((m) => m.state === 'T')).toBe(true);
    await expect(c.get('k')).rejects.toThrow(/timed out/i);
    await server.resume();
    expect(server.state).toBe('running');
    expect(await waitFor(() => c.get('k'), { message: 'get after resume' })).toBe('v');
  });

  it('dropConnections closes existing clients from the server side; they reconnect', async () => {
    const server = await start();
    const c = client(server);
    await c.set('k', 'v');
    let closes = 0;
    c.on('close', () => {
      closes += 1;
    });
    await server.dropConnections();
    await waitFor(() => closes > 0, { message: 'client saw the connection close' });
    expect(await waitFor(() => c.get('k'), { message: 'get after reconnect' })).toBe('v');
  });

  it('close leaves no process and no temp dir, and is idempotent', async () => {
    const server = await startRedis({ strategy: 'managed' });
    const { pid, dir, port } = server;
    expect(pid).toBeTypeOf('number');
    expect(existsSync(dir as string)).toBe(true);
    await server.pause(); // a paused server must be torn down too
    await server.close();
    await server.close();
    expect(server.state).toBe('closed');
    await waitServerGone({ pgid: pid as number, pattern: `127.0.0.1:${port}`, port });
    expect(pgrep(`127.0.0.1:${port}`)).toEqual([]);
    expect(existsSync(dir as string)).toBe(false);
    await expect(server.restart()).rejects.toMatchObject({ code: 'SERVER_CLOSED' });
  });
});
