import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Cluster } from 'ioredis';

const run = promisify(execFile);

/** A free TCP port whose cluster-bus port (+10000) is free too. */
async function freeClusterPort(): Promise<number> {
  const isFree = (port: number) =>
    new Promise<boolean>((resolve) => {
      const server = createServer();
      server.once('error', () => resolve(false));
      server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
    });
  for (;;) {
    const port = 20_000 + Math.floor(Math.random() * 30_000);
    if ((await isFree(port)) && (await isFree(port + 10_000))) return port;
  }
}

/** A throwaway 3-primary Redis Cluster of local `redis-server` processes (no replicas). */
export interface LocalCluster {
  ports: number[];
  /** A new ioredis Cluster client, with an 'error' listener. */
  client(): Cluster;
  close(): Promise<void>;
}

/** Starts three cluster-enabled `redis-server`s and joins them with `redis-cli --cluster create`. */
export async function startCluster(): Promise<LocalCluster> {
  const dir = mkdtempSync(join(tmpdir(), 'fleetcron-cluster-'));
  const ports: number[] = [];
  const children: ChildProcess[] = [];
  const clients: Cluster[] = [];
  const close = async () => {
    for (const client of clients) client.disconnect();
    for (const child of children) child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    for (let i = 0; i < 3; i++) {
      const port = await freeClusterPort();
      ports.push(port);
      const child = spawn(
        'redis-server',
        [
          ...['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
          ...['--cluster-enabled', 'yes', '--cluster-config-file', `nodes-${port}.conf`],
          ...['--dir', dir, '--protected-mode', 'no', '--daemonize', 'no'],
        ],
        { stdio: 'ignore' },
      );
      child.on('error', () => {});
      children.push(child);
    }
    for (const port of ports)
      await waitFor(
        () => cli(port, 'PING'),
        (r) => r.trim() === 'PONG',
      );
    await run('redis-cli', [
      '--cluster',
      'create',
      ...ports.map((p) => `127.0.0.1:${p}`),
      '--cluster-replicas',
      '0',
      '--cluster-yes',
    ]);
    for (const port of ports) {
      await waitFor(
        () => cli(port, 'CLUSTER', 'INFO'),
        (r) => r.includes('cluster_state:ok'),
      );
    }
  } catch (error) {
    await close();
    throw error;
  }
  return {
    ports,
    client() {
      const client = new Cluster(ports.map((port) => ({ host: '127.0.0.1', port })));
      client.on('error', () => {});
      clients.push(client);
      return client;
    },
    close,
  };
}

async function cli(port: number, ...args: string[]): Promise<string> {
  return (await run('redis-cli', ['-p', String(port), ...args])).stdout;
}

async function waitFor(
  probe: () => Promise<string>,
  ok: (reply: string) => boolean,
  timeoutMs = 20_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      if (ok(await probe())) return;
    } catch {
      // not up yet
    }
    if (Date.now() > deadline) throw new Error('redis cluster did not come up in time');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
