import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { binaryVersion, findBinary } from './binaries.js';
import { startContainer } from './container.js';
import { externalLifecycle, type Lifecycle, ServerHandle } from './handle.js';
import { localLifecycle, startLocal } from './local.js';
import { freePort } from './ports.js';
import { chooseStrategy, ENV_VARS } from './strategy.js';
import { reapStaleOnce, ServerDir } from './temp-dir.js';
import type { EtcdServer, StartOptions, Strategy } from './types.js';

/** Options of {@link startEtcd}. */
export interface EtcdOptions extends StartOptions {}

const IMAGE = 'quay.io/coreos/etcd:v3.4.23';

function findEtcd(): string | undefined {
  return findBinary('etcd', ['/usr/bin', '/usr/local/bin', '/opt/homebrew/bin']);
}

/** True when `GET endpoint/health` answers `{"health":"true"}`. */
export async function etcdHealthy(endpoint: string, timeoutMs = 1000): Promise<boolean> {
  try {
    const response = await fetch(`${endpoint}/health`, { signal: AbortSignal.timeout(timeoutMs) });
    const body = (await response.json()) as { health?: unknown };
    return body.health === 'true' || body.health === true;
  } catch {
    return false;
  }
}

async function etcdVersion(endpoint: string): Promise<string> {
  try {
    const response = await fetch(`${endpoint}/version`, { signal: AbortSignal.timeout(2000) });
    const body = (await response.json()) as { etcdserver?: unknown };
    return typeof body.etcdserver === 'string' ? body.etcdserver : 'unknown';
  } catch {
    return 'unknown';
  }
}

class EtcdHandle extends ServerHandle implements EtcdServer {
  declare readonly kind: 'etcd';
  readonly endpoints: string[];

  constructor(strategy: Strategy, version: string, endpoints: string[], lifecycle: Lifecycle) {
    super('etcd', strategy, version, lifecycle);
    this.endpoints = endpoints;
  }
}

/** Single-node cluster flags; `listen` is the address etcd binds, `advertise` the one clients use. */
function clusterArgs(
  dataDir: string,
  listen: string,
  advertise: string,
  client: number,
  peer: number,
) {
  return [
    '--name',
    'n1',
    '--data-dir',
    dataDir,
    '--listen-client-urls',
    `http://${listen}:${client}`,
    '--advertise-client-urls',
    `http://${advertise}:${client}`,
    '--listen-peer-urls',
    `http://${listen}:${peer}`,
    '--initial-advertise-peer-urls',
    `http://127.0.0.1:${peer}`,
    '--initial-cluster',
    `n1=http://127.0.0.1:${peer}`,
    '--initial-cluster-state',
    'new',
    // One node: short raft timings make start and restart quick.
    '--heartbeat-interval',
    '50',
    '--election-timeout',
    '500',
    '--logger',
    'zap',
    '--log-level',
    'warn',
  ];
}

/**
 * Starts a throwaway single-node etcd (or wraps `FLEETCRON_TEST_ETCD_ENDPOINTS`, comma-separated)
 * and returns its handle with fault controls. Local servers keep their data on `/dev/shm` when it
 * exists (etcd is fsync-bound; etcd 3.4 has no `--unsafe-no-fsync`). `dropConnections()` restarts
 * the server, since etcd cannot close client connections on demand.
 *
 * @example
 * const etcd = await startEtcd();
 * const client = new Etcd3({ hosts: etcd.endpoints });
 */
export async function startEtcd(options: EtcdOptions = {}): Promise<EtcdServer> {
  const startTimeoutMs = options.startTimeoutMs ?? 30_000;
  const strategy = await chooseStrategy('etcd', options.strategy, () => findEtcd() !== undefined);

  if (strategy === 'external') {
    const endpoints = (process.env[ENV_VARS.etcd] as string)
      .split(',')
      .map((e) => e.trim())
      .filter(Boolean);
    return new EtcdHandle(
      'external',
      await etcdVersion(endpoints[0] ?? ''),
      endpoints,
      externalLifecycle('etcd', ENV_VARS.etcd),
    );
  }

  if (strategy === 'container') {
    const [hostPort, peerPort] = [await freePort(), await freePort()];
    let endpoint = `http://127.0.0.1:${hostPort}`;
    const started = await startContainer({
      image: IMAGE,
      containerPort: hostPort, // same port inside and outside, so the advertised URL is right
      hostPort,
      command: ['etcd', ...clusterArgs('/etcd-data', '0.0.0.0', '127.0.0.1', hostPort, peerPort)],
      ready: () => etcdHealthy(endpoint),
      startTimeoutMs,
    });
    endpoint = `http://${started.host}:${hostPort}`;
    return new EtcdHandle('container', '3.4.23', [endpoint], {
      ...started.lifecycle,
      dropConnections: async () => {
        await started.lifecycle.stop(false);
        await started.lifecycle.start();
      },
    });
  }

  reapStaleOnce();
  const binary = findEtcd() as string;
  const dir = new ServerDir(existsSync('/dev/shm') ? '/dev/shm' : tmpdir());
  const dataDir = join(dir.path, 'data');
  const { process: proc, ports } = await startLocal(dir, 2, ([client, peer]) => ({
    name: 'etcd',
    command: binary,
    args: clusterArgs(dataDir, '127.0.0.1', '127.0.0.1', client as number, peer as number),
    cwd: dir.path,
    readyProbe: () => etcdHealthy(`http://127.0.0.1:${client}`, 500),
    startTimeoutMs,
    stopSignal: 'SIGTERM',
    dir,
  }));
  const endpoint = `http://127.0.0.1:${ports[0]}`;
  return new EtcdHandle(
    'local',
    await binaryVersion(binary),
    [endpoint],
    localLifecycle(proc, dir, async () => {
      await proc.stop(false);
      await proc.start();
    }),
  );
}
