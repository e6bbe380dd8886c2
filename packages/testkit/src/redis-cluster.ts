import { tmpdir } from 'node:os';
import { binaryVersion, findBinary } from './binaries.js';
import { ServerNotInstalledError } from './errors.js';
import { startLocal } from './local.js';
import type { LocalProcess } from './local-process.js';
import { type RespTarget, redisCommands, redisPing } from './resp.js';
import { reapStaleOnce, ServerDir } from './temp-dir.js';
import { waitFor } from './wait.js';

/** Options of {@link startRedisCluster}. */
export interface RedisClusterOptions {
  /** Number of primaries (no replicas), 1 to 16. Default 3. */
  primaries?: number;
  /** Deadline in ms for each node to start and for the cluster to agree. Default 30 000. */
  startTimeoutMs?: number;
}

/** A node of a {@link RedisCluster}. */
export interface RedisClusterNode {
  host: string;
  port: number;
}

/** A throwaway Redis Cluster of local `redis-server` processes; see {@link startRedisCluster}. */
export interface RedisCluster {
  /** Every primary, in slot order: startup nodes for `new Cluster(nodes)` (ioredis). */
  readonly nodes: readonly RedisClusterNode[];
  /** The primaries' client ports, in the order of {@link RedisCluster.nodes}. */
  readonly ports: readonly number[];
  /** `redis-server` version, e.g. `7.0.15`. */
  readonly version: string;
  /**
   * Registers a client of the cluster (any object with `disconnect()`, e.g. an ioredis
   * `Cluster`) to be disconnected by {@link RedisCluster.close} before the nodes go away, so it
   * does not keep reconnecting; returns it.
   */
  track<C extends { disconnect(): void }>(client: C): C;
  /**
   * Disconnects the tracked clients, kills every node and removes its temp dir; resolves when no
   * process is left. Idempotent.
   */
  close(): Promise<void>;
}

const SLOTS = 16_384;

/** One started node: its process, temp dir and ports. */
interface Node {
  proc: LocalProcess;
  dir: ServerDir;
  port: number;
  busPort: number;
}

/** The slots primary `index` of `count` serves: an even share, in order. */
function slotsOf(index: number, count: number): string[] {
  const first = Math.floor((index * SLOTS) / count);
  const last = Math.floor(((index + 1) * SLOTS) / count) - 1;
  return Array.from({ length: last - first + 1 }, (_, i) => String(first + i));
}

/** Sends `command` to `target` and throws when Redis answers with an error. */
async function command(target: RespTarget, ...args: string[]): Promise<string> {
  const [reply] = await redisCommands(target, [args]);
  if (reply instanceof Error) throw reply;
  return String(reply);
}

/** Starts one cluster-enabled node on a free port and bus port (`--cluster-port`, Redis 7+). */
async function startNode(binary: string, startTimeoutMs: number): Promise<Node> {
  const dir = new ServerDir(tmpdir());
  const { process: proc, ports } = await startLocal(dir, 2, ([port, busPort]) => ({
    name: 'redis-server (cluster node)',
    command: binary,
    args: [
      ...['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      ...['--cluster-enabled', 'yes', '--cluster-port', String(busPort)],
      ...['--cluster-config-file', 'nodes.conf', '--dir', dir.path],
      ...['--daemonize', 'no', '--protected-mode', 'no'],
    ],
    readyProbe: () => redisPing({ host: '127.0.0.1', port: port as number }, 500),
    startTimeoutMs,
    stopSignal: 'SIGTERM',
    dir,
  }));
  return { proc, dir, port: ports[0] as number, busPort: ports[1] as number };
}

/** Kills a node's processes (waiting until they are gone) and removes its dir. */
async function closeNode(node: Node): Promise<void> {
  try {
    await node.proc.kill();
  } finally {
    node.dir.remove();
  }
}

/**
 * Starts a Redis Cluster of `primaries` local `redis-server` processes (no replicas), assigns the
 * 16384 slots evenly, joins the nodes with `CLUSTER MEET` and resolves once every node reports
 * `cluster_state:ok` and knows every other node. Local binaries only (Redis 7+, for
 * `--cluster-port`): there is no env-var or container strategy.
 *
 * Same no-leftover guarantees as the other local servers: each node runs in its own process
 * group under `--pdeathsig` with an owner file in its temp dir, so it dies with the test process
 * and a later run reaps it after a kill -9; a failed start kills the nodes already started.
 *
 * @example
 * const cluster = await startRedisCluster();
 * const client = cluster.track(new Cluster([...cluster.nodes]));
 * client.on('error', () => {});
 * // ...
 * await cluster.close(); // disconnects the tracked client first
 */
export async function startRedisCluster(options: RedisClusterOptions = {}): Promise<RedisCluster> {
  const primaries = options.primaries ?? 3;
  const startTimeoutMs = options.startTimeoutMs ?? 30_000;
  if (!Number.isInteger(primaries) || primaries < 1 || primaries > 16) {
    throw new RangeError(`primaries must be an integer from 1 to 16, got ${primaries}`);
  }
  const binary = findBinary('redis-server', ['/usr/bin', '/usr/local/bin', '/opt/homebrew/bin']);
  if (!binary) {
    throw new ServerNotInstalledError(
      'startRedisCluster needs a local redis-server (7+): install it, e.g. `apt-get install -y redis-server`.',
    );
  }
  reapStaleOnce();
  const nodes: Node[] = [];
  const clients: { disconnect(): void }[] = [];
  let closed: Promise<void> | undefined;
  const close = (): Promise<void> => {
    for (const client of clients.splice(0)) client.disconnect();
    closed ??= Promise.allSettled(nodes.map(closeNode)).then((results) => {
      const failed = results.find((r) => r.status === 'rejected');
      if (failed) throw (failed as PromiseRejectedResult).reason;
    });
    return closed;
  };
  try {
    const started = await Promise.allSettled(
      Array.from({ length: primaries }, () => startNode(binary, startTimeoutMs)),
    );
    for (const result of started) if (result.status === 'fulfilled') nodes.push(result.value);
    const failed = started.find((r) => r.status === 'rejected');
    if (failed) throw (failed as PromiseRejectedResult).reason;
    const targets = nodes.map((node) => ({ host: '127.0.0.1', port: node.port }));
    for (const [i, target] of targets.entries()) {
      await command(target, 'CLUSTER', 'SET-CONFIG-EPOCH', String(i + 1));
      await command(target, 'CLUSTER', 'ADDSLOTS', ...slotsOf(i, primaries));
    }
    const [first, ...others] = nodes;
    for (const node of others) {
      await command(
        targets[0] as RespTarget,
        'CLUSTER',
        'MEET',
        '127.0.0.1',
        String(node.port),
        String(node.busPort),
      );
    }
    await waitFor(
      async () => {
        for (const target of targets) {
          const info = await command(target, 'CLUSTER', 'INFO').catch(() => '');
          if (!info.includes('cluster_state:ok')) return false;
          if (!info.includes(`cluster_known_nodes:${primaries}\r`)) return false;
        }
        return true;
      },
      {
        timeoutMs: startTimeoutMs,
        intervalMs: 50,
        message: `redis cluster of ${primaries} nodes (first on port ${first?.port}) agreeing`,
      },
    );
  } catch (error) {
    await close().catch(() => {});
    throw error;
  }
  return {
    nodes: nodes.map((node) => ({ host: '127.0.0.1', port: node.port })),
    ports: nodes.map((node) => node.port),
    version: await binaryVersion(binary),
    track(client) {
      clients.push(client);
      return client;
    },
    close,
  };
}
