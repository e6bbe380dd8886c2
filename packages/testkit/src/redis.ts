import { tmpdir } from 'node:os';
import { binaryVersion, findBinary } from './binaries.js';
import { startContainer } from './container.js';
import { externalLifecycle, type Lifecycle, ServerHandle } from './handle.js';
import { localLifecycle, startLocal } from './local.js';
import { freePort } from './ports.js';
import { type RespTarget, redisCommands, redisPing, respTarget } from './resp.js';
import { chooseStrategy, ENV_VARS } from './strategy.js';
import { reapStaleOnce, ServerDir } from './temp-dir.js';
import type { RedisServer, StartOptions, Strategy } from './types.js';

/** Options of {@link startRedis}. */
export interface RedisOptions extends StartOptions {
  /** `appendonly yes` + `appendfsync always`: keys survive stop/start. Default false (no persistence). */
  appendOnly?: boolean;
}

const IMAGE = 'redis:7';

function findRedisServer(): string | undefined {
  return findBinary('redis-server', ['/usr/bin', '/usr/local/bin', '/opt/homebrew/bin']);
}

/** Server-side kill of every client connection (ours is skipped by CLIENT KILL's default SKIPME). */
async function killClients(target: RespTarget): Promise<void> {
  const replies = await redisCommands(target, [
    ['CLIENT', 'KILL', 'TYPE', 'normal'],
    ['CLIENT', 'KILL', 'TYPE', 'pubsub'],
  ]);
  const failed = replies.find((r) => r instanceof Error);
  if (failed) throw failed;
}

class RedisHandle extends ServerHandle implements RedisServer {
  declare readonly kind: 'redis';
  readonly url: string;
  readonly host: string;
  readonly port: number;

  constructor(strategy: Strategy, version: string, url: string, lifecycle: Lifecycle) {
    super('redis', strategy, version, lifecycle);
    const u = new URL(url);
    this.url = url;
    this.host = u.hostname;
    this.port = Number(u.port || 6379);
  }
}

/**
 * Starts a throwaway Redis server (or wraps the one in `FLEETCRON_TEST_REDIS_URL`) and returns its
 * handle with fault controls. Local servers listen on 127.0.0.1 on a free port.
 *
 * @example
 * const redis = await startRedis({ appendOnly: true });
 * const client = new Redis(redis.url);
 * await redis.restart(); // keys survive because of appendOnly
 * await redis.close();
 */
export async function startRedis(options: RedisOptions = {}): Promise<RedisServer> {
  const startTimeoutMs = options.startTimeoutMs ?? 30_000;
  const appendOnly = options.appendOnly ?? false;
  const strategy = await chooseStrategy(
    'redis',
    options.strategy,
    () => findRedisServer() !== undefined,
  );
  const persistence = appendOnly
    ? ['--appendonly', 'yes', '--appendfsync', 'always']
    : ['--appendonly', 'no'];

  if (strategy === 'external') {
    const url = process.env[ENV_VARS.redis] as string;
    let version = 'unknown';
    try {
      const [info] = await redisCommands(respTarget(url), [['INFO', 'server']]);
      version = /redis_version:([\d.]+)/.exec(typeof info === 'string' ? info : '')?.[1] ?? version;
    } catch {
      // version stays unknown
    }
    return new RedisHandle('external', version, url, externalLifecycle('redis', ENV_VARS.redis));
  }

  if (strategy === 'container') {
    const hostPort = await freePort();
    const started = await startContainer({
      image: IMAGE,
      containerPort: 6379,
      hostPort,
      command: ['redis-server', '--save', '', '--protected-mode', 'no', ...persistence],
      waitLog: { pattern: /Ready to accept connections/, times: 1 },
      ready: () => redisPing({ host: started.host, port: hostPort }),
      startTimeoutMs,
    });
    const target = { host: started.host, port: hostPort };
    return new RedisHandle('container', '7', `redis://${started.host}:${hostPort}`, {
      ...started.lifecycle,
      dropConnections: () => killClients(target),
    });
  }

  reapStaleOnce();
  const binary = findRedisServer() as string;
  const dir = new ServerDir(tmpdir());
  const { process: proc, ports } = await startLocal(dir, 1, ([port]) => ({
    name: 'redis-server',
    command: binary,
    args: [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--save',
      '',
      '--dir',
      dir.path,
      '--daemonize',
      'no',
      '--protected-mode',
      'no',
      ...persistence,
    ],
    readyProbe: () => redisPing({ host: '127.0.0.1', port: port as number }, 500),
    startTimeoutMs,
    stopSignal: 'SIGTERM',
    dir,
  }));
  const port = ports[0] as number;
  const target = { host: '127.0.0.1', port };
  return new RedisHandle(
    'local',
    await binaryVersion(binary),
    `redis://127.0.0.1:${port}`,
    localLifecycle(proc, dir, () => killClients(target)),
  );
}
