import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { binaryVersion, findPostgresBinDir, lookupUser } from './binaries.js';
import { startContainer } from './container.js';
import { externalLifecycle, type Lifecycle, ServerHandle } from './handle.js';
import { localLifecycle, startLocal } from './local.js';
import { createDatabase, postgresVersion, terminateBackends } from './pg-admin.js';
import { initDataDir } from './pg-template.js';
import { freePort } from './ports.js';
import { chooseStrategy, ENV_VARS, notInstalled } from './strategy.js';
import { reapStaleOnce, ServerDir } from './temp-dir.js';
import type { PostgresServer, StartOptions, Strategy } from './types.js';

/** Options of {@link startPostgres}. */
export interface PostgresOptions extends StartOptions {
  /**
   * Extra server settings, passed as `-c name=value` (local and container), e.g.
   * `{ max_connections: 300 }`. Defaults: `fsync=off`, `max_connections=200`,
   * `dynamic_shared_memory_type=mmap`.
   */
  settings?: Record<string, string | number | boolean>;
}

const IMAGE = 'postgres:15';
const READY = /database system is ready to accept connections/;

class PostgresHandle extends ServerHandle implements PostgresServer {
  declare readonly kind: 'postgres';
  readonly url: string;
  readonly host: string;
  readonly port: number;

  constructor(strategy: Strategy, version: string, url: string, lifecycle: Lifecycle) {
    super('postgres', strategy, version, lifecycle);
    const u = new URL(url);
    this.url = url;
    this.host = u.hostname;
    this.port = Number(u.port || 5432);
  }

  readonly createDatabase = (name?: string): Promise<string> => createDatabase(this.url, name);
}

function settingArgs(options: PostgresOptions): string[] {
  const settings = {
    fsync: 'off',
    max_connections: 200,
    // Dynamic shared memory in the data dir, not /dev/shm: nothing is left behind after a kill.
    dynamic_shared_memory_type: 'mmap',
    ...options.settings,
  };
  return Object.entries(settings).flatMap(([k, v]) => [
    '-c',
    `${k}=${typeof v === 'boolean' ? (v ? 'on' : 'off') : v}`,
  ]);
}

/**
 * Starts a throwaway PostgreSQL server (or wraps the one in `FLEETCRON_TEST_POSTGRES_URL`) and
 * returns its handle with fault controls. Local servers: `initdb` in a temp dir (owned by the
 * `postgres` user when running as root), `fsync=off`, listening on 127.0.0.1 on a free port.
 *
 * @example
 * const pg = await startPostgres();
 * const url = await pg.createDatabase(); // an isolated database for this test file
 * await pg.pause(); // postmaster and every backend are SIGSTOPped
 * await pg.resume();
 * await pg.close();
 */
export async function startPostgres(options: PostgresOptions = {}): Promise<PostgresServer> {
  const startTimeoutMs = options.startTimeoutMs ?? 30_000;
  const strategy = await chooseStrategy(
    'postgres',
    options.strategy,
    () => findPostgresBinDir() !== undefined,
  );

  if (strategy === 'external') {
    const url = process.env[ENV_VARS.postgres] as string;
    return new PostgresHandle(
      'external',
      await postgresVersion(url),
      url,
      externalLifecycle('postgres', ENV_VARS.postgres),
    );
  }

  if (strategy === 'container') {
    const hostPort = await freePort();
    const started = await startContainer({
      image: IMAGE,
      containerPort: 5432,
      hostPort,
      env: { POSTGRES_HOST_AUTH_METHOD: 'trust' },
      command: ['postgres', ...settingArgs(options)],
      // The image's entrypoint starts a temporary server for initialisation first.
      waitLog: { pattern: READY, times: 2 },
      ready: async (c) =>
        (await c.exec(['pg_isready', '-h', '127.0.0.1', '-U', 'postgres'])).exitCode === 0,
      startTimeoutMs,
    });
    const url = `postgres://postgres@${started.host}:${hostPort}/postgres`;
    return new PostgresHandle('container', '15', url, {
      ...started.lifecycle,
      dropConnections: () => terminateBackends(url),
    });
  }

  reapStaleOnce();
  const binDir = findPostgresBinDir() as string;
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  const runAs = isRoot ? (lookupUser('postgres') ?? lookupUser('nobody')) : undefined;
  if (isRoot && !runAs) {
    throw notInstalled('postgres', 'running as root, but there is no `postgres` user to run it as');
  }
  const version = await binaryVersion(join(binDir, 'postgres'));
  const dir = new ServerDir(tmpdir(), runAs);
  const dataDir = join(dir.path, 'data');
  try {
    await initDataDir(binDir, version, dataDir, runAs, Math.max(startTimeoutMs, 60_000));
  } catch (error) {
    dir.remove();
    throw error;
  }
  const { process: proc, ports } = await startLocal(dir, 1, ([port]) => ({
    name: 'postgres',
    command: join(binDir, 'postgres'),
    args: [
      '-D',
      dataDir,
      '-p',
      String(port),
      '-k',
      dir.path,
      '-c',
      'listen_addresses=127.0.0.1',
      ...settingArgs(options),
    ],
    ...(runAs ? { runAs } : {}),
    cwd: dir.path,
    readyLog: READY,
    startTimeoutMs,
    stopSignal: 'SIGINT',
    crashSignal: 'SIGQUIT',
    dir,
  }));
  const url = `postgres://postgres@127.0.0.1:${ports[0]}/postgres`;
  return new PostgresHandle(
    'local',
    version,
    url,
    localLifecycle(proc, dir, () => terminateBackends(url)),
  );
}
