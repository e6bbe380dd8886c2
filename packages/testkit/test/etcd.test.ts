import { Etcd3 } from 'etcd3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEtcd } from '../src/etcd.js';
import type { EtcdServer } from '../src/types.js';
import { waitFor } from '../src/wait.js';
import { existsSync, groupMembers, pgrep, waitServerGone } from './helpers.js';

const clients: Etcd3[] = [];

/** An etcd3 client with a short per-call deadline; its errors are recorded, never thrown at us. */
function client(server: EtcdServer, deadlineMs = 2000) {
  const c = new Etcd3({
    hosts: server.endpoints,
    dialTimeout: 1000,
    defaultCallOptions: (context) =>
      context.isStream ? {} : { deadline: new Date(Date.now() + deadlineMs) },
  });
  clients.push(c);
  return c;
}

let server: EtcdServer;

beforeAll(async () => {
  server = await startEtcd({ strategy: 'managed' });
});

afterAll(async () => {
  for (const c of clients) c.close();
  await server.close();
});

describe('startEtcd (local)', () => {
  it('starts a healthy single-node server', async () => {
    expect(server.kind).toBe('etcd');
    expect(server.strategy).toBe('local');
    expect(server.endpoints).toEqual([expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/)]);
    expect(server.version).toMatch(/^3\.\d+\.\d+$/);
    const c = client(server);
    await c.put('k').value('v');
    expect(await c.get('k').string()).toBe('v');
  });

  it('keeps data across stop/start and a crash restart, on the same endpoint', async () => {
    const c = client(server);
    await c.put('persist').value('1');
    const endpoints = server.endpoints;
    await server.stop();
    expect(server.state).toBe('stopped');
    await server.start();
    expect(server.endpoints).toEqual(endpoints);
    expect(await waitFor(() => c.get('persist').string(), { message: 'key after restart' })).toBe(
      '1',
    );
    await c.put('persist').value('2');
    await server.restart({ crash: true });
    expect(await waitFor(() => c.get('persist').string(), { message: 'key after crash' })).toBe(
      '2',
    );
  });

  it('pause makes calls miss their deadline; resume recovers', async () => {
    const c = client(server, 500);
    await waitFor(() => c.put('p').value('v'), { message: 'put before pause' });
    await server.pause();
    expect(groupMembers(server.pid as number).every((m) => m.state === 'T')).toBe(true);
    await expect(c.get('p').string()).rejects.toThrow();
    await server.resume();
    expect(await waitFor(() => c.get('p').string(), { message: 'get after resume' })).toBe('v');
  });

  it('dropConnections restarts the server; clients reconnect', async () => {
    const c = client(server);
    await waitFor(() => c.put('d').value('v'), { message: 'put before drop' });
    const pid = server.pid;
    await server.dropConnections();
    expect(server.pid).not.toBe(pid);
    expect(server.state).toBe('running');
    expect(await waitFor(() => c.get('d').string(), { message: 'get after drop' })).toBe('v');
  });

  it('close leaves no process and no temp dir (data on /dev/shm when present)', async () => {
    const own = await startEtcd({ strategy: 'managed' });
    const { pid, dir } = own;
    if (existsSync('/dev/shm')) expect(dir?.startsWith('/dev/shm/')).toBe(true);
    const port = Number(new URL(own.endpoints[0] as string).port);
    await own.close();
    await own.close();
    await waitServerGone({ pgid: pid as number, pattern: dir as string, port });
    expect(pgrep(dir as string)).toEqual([]);
    expect(existsSync(dir as string)).toBe(false);
  });
});
