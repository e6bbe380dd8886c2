import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { binaryVersion, findBinary } from '../binaries.js';
import { ServerNotInstalledError } from '../errors.js';
import { LocalProcess } from '../local-process.js';
import { freePort } from '../ports.js';
import { type RespTarget, redisCommands, redisPing } from '../resp.js';
import { reapStaleOnce, ServerDir } from '../temp-dir.js';
import { waitFor } from '../wait.js';
import { MemberSet } from './member-set.js';

/** Options of {@link startRedisSentinel}. */
export interface RedisSentinelOptions {
  /** Sentinels watching the primary, 1 to 7. Default 3 (quorum 2). */
  sentinels?: number;
  /** `sentinel down-after-milliseconds`: silence after which a node is judged down. Default 1000. */
  downAfterMs?: number;
  /** `sentinel failover-timeout`, in ms. Default 10 000. */
  failoverTimeoutMs?: number;
  /** Deadline in ms for the topology to start and agree. Default 30 000. */
  startTimeoutMs?: number;
}

/** A host and port, the shape ioredis takes for `sentinels`. */
export interface RedisAddress {
  host: string;
  port: number;
}

/**
 * A Redis primary, one replica and Sentinels from local `redis-server` binaries; see
 * {@link startRedisSentinel}. Members by index: 0 the server started as primary, 1 the replica,
 * 2 and up the Sentinels.
 */
export interface RedisSentinel {
  /** The monitored group's name: `new Redis({ sentinels, name })` (ioredis). */
  readonly name: string;
  /** The Sentinels' addresses, for ioredis' `sentinels` option. */
  readonly sentinels: readonly RedisAddress[];
  /** The data nodes, index 0 (started as primary) and 1 (started as replica). */
  readonly nodes: readonly [RedisAddress, RedisAddress];
  /** `redis-server` version, e.g. `7.0.15`. */
  readonly version: string;
  /**
   * Index (0 or 1) of the data node a quorum of running Sentinels names as primary now; waits
   * up to `timeoutMs` (default 10 000) for a quorum to agree.
   */
  primary(timeoutMs?: number): Promise<0 | 1>;
  /** SIGKILL of member `index` (0, 1: data nodes; 2 and up: Sentinels). */
  kill(index: number): Promise<void>;
  /** SIGSTOP of member `index`. */
  pause(index: number): Promise<void>;
  /** SIGCONT of a paused member. */
  resume(index: number): Promise<void>;
  /**
   * Starts a killed member again. A data node comes back as it was configured at start; the
   * Sentinels reconfigure a returning old primary as a replica of the new one.
   */
  start(index: number): Promise<void>;
  /** Kills every process and removes the temp dirs. Idempotent. */
  close(): Promise<void>;
}

const GROUP = 'fleetcron';

async function command(target: RespTarget, ...args: string[]): Promise<unknown> {
  const [reply] = await redisCommands(target, [args], 2000);
  if (reply instanceof Error) throw reply;
  return reply;
}

/**
 * Starts a Redis primary, a replica of it and `sentinels` Sentinels (default 3, quorum a
 * majority) as local processes on loopback ports; resolves when the replica is in sync and every
 * Sentinel names the primary and knows the other Sentinels and the replica. A Sentinel is the same
 * `redis-server` binary run with a config file and `--sentinel`. Each process runs in its own
 * process group under `setpriv --pdeathsig` with an owner file in its temp dir, like every testkit
 * server.
 *
 * @example
 * const ha = await startRedisSentinel();
 * const redis = new Redis({ sentinels: [...ha.sentinels], name: ha.name });
 * await ha.kill(await ha.primary()); // the Sentinels promote the replica
 */
export async function startRedisSentinel(
  options: RedisSentinelOptions = {},
): Promise<RedisSentinel> {
  const sentinelCount = options.sentinels ?? 3;
  const downAfterMs = options.downAfterMs ?? 1000;
  const failoverTimeoutMs = options.failoverTimeoutMs ?? 10_000;
  const startTimeoutMs = options.startTimeoutMs ?? 30_000;
  if (!Number.isInteger(sentinelCount) || sentinelCount < 1 || sentinelCount > 7) {
    throw new RangeError(`sentinels must be an integer from 1 to 7, got ${sentinelCount}`);
  }
  const binary = findBinary('redis-server', ['/usr/bin', '/usr/local/bin', '/opt/homebrew/bin']);
  if (!binary) {
    throw new ServerNotInstalledError(
      'startRedisSentinel needs a local redis-server (6.2+; Sentinel is the same binary): install it, e.g. `apt-get install -y redis-server`.',
    );
  }
  reapStaleOnce();
  const quorum = Math.floor(sentinelCount / 2) + 1;
  const ports: number[] = [];
  while (ports.length < 2 + sentinelCount) {
    const port = await freePort();
    if (!ports.includes(port)) ports.push(port);
  }
  const address = (i: number): RedisAddress => ({ host: '127.0.0.1', port: ports[i] as number });
  const set = new MemberSet();
  for (const [i, port] of ports.entries()) {
    const dir = new ServerDir(tmpdir());
    const sentinel = i >= 2;
    let args: string[];
    if (sentinel) {
      const conf = join(dir.path, 'sentinel.conf');
      writeFileSync(
        conf,
        [
          `port ${port}`,
          'bind 127.0.0.1',
          'protected-mode no',
          `dir ${dir.path}`,
          `sentinel monitor ${GROUP} 127.0.0.1 ${ports[0]} ${quorum}`,
          `sentinel down-after-milliseconds ${GROUP} ${downAfterMs}`,
          `sentinel failover-timeout ${GROUP} ${failoverTimeoutMs}`,
          `sentinel parallel-syncs ${GROUP} 1`,
          '',
        ].join('\n'),
      );
      args = [conf, '--sentinel'];
    } else {
      args = [
        ...['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
        ...['--dir', dir.path, '--daemonize', 'no', '--protected-mode', 'no'],
        ...(i === 1 ? ['--replicaof', '127.0.0.1', String(ports[0])] : []),
      ];
    }
    const name = sentinel ? `redis sentinel ${i - 1}` : i === 0 ? 'redis primary' : 'redis replica';
    const proc = new LocalProcess({
      name,
      command: binary,
      args,
      cwd: dir.path,
      readyProbe: () => redisPing(address(i), 500),
      startTimeoutMs,
      stopSignal: 'SIGTERM',
      dir,
    });
    set.add({ name, proc, dir });
  }
  await set.startAll();
  const sentinels = ports.slice(2).map((_, k) => address(k + 2));
  try {
    await waitFor(
      async () => {
        const info = String(await command(address(1), 'INFO', 'replication'));
        if (!info.includes('master_link_status:up')) return false;
        for (const sentinel of sentinels) {
          const master = (await command(sentinel, 'SENTINEL', 'MASTER', GROUP)) as string[];
          const field = (key: string) => master[master.indexOf(key) + 1];
          if (field('port') !== String(ports[0])) return false;
          if (Number(field('num-slaves')) < 1) return false;
          if (Number(field('num-other-sentinels')) < sentinelCount - 1) return false;
        }
        return true;
      },
      {
        timeoutMs: startTimeoutMs,
        message: 'the replica in sync and every Sentinel knowing the primary, replica and others',
      },
    );
  } catch (error) {
    await set.close().catch(() => {});
    throw error;
  }
  const primary = (timeoutMs = 10_000): Promise<0 | 1> =>
    waitFor(
      async () => {
        const votes = [0, 0];
        for (const i of set.running().filter((k) => k >= 2)) {
          const reply = await command(
            address(i),
            'SENTINEL',
            'GET-MASTER-ADDR-BY-NAME',
            GROUP,
          ).catch(() => null);
          const port = Array.isArray(reply) ? Number(reply[1]) : Number.NaN;
          const node = ports.indexOf(port);
          if (node === 0 || node === 1) votes[node] = (votes[node] ?? 0) + 1;
        }
        if ((votes[0] ?? 0) >= quorum) return 'n0';
        if ((votes[1] ?? 0) >= quorum) return 'n1';
        return false;
      },
      { timeoutMs, intervalMs: 50, message: 'a quorum of Sentinels naming one primary' },
    ).then((found) => (found === 'n0' ? 0 : 1));
  return {
    name: GROUP,
    sentinels,
    nodes: [address(0), address(1)],
    version: await binaryVersion(binary),
    primary,
    kill: (index) => set.kill(index),
    pause: (index) => set.pause(index),
    resume: (index) => set.resume(index),
    start: (index) => set.start(index),
    close: () => set.close(),
  };
}
