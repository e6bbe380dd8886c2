import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findBinary, lookupUser } from './binaries.js';
import { ServerNotInstalledError } from './errors.js';
import { startLocal } from './local.js';
import { withPgClient } from './pg-admin.js';
import { reapStaleOnce, ServerDir } from './temp-dir.js';

/** Options of {@link startPgBouncer}. */
export interface PgBouncerOptions {
  /** URL of the PostgreSQL server to pool, e.g. `startPostgres()`'s `url`. */
  upstreamUrl: string;
  /** PgBouncer `pool_mode`. Default `transaction`. */
  poolMode?: 'session' | 'transaction' | 'statement';
  /** Server connections per (database, user) pair. Default 4. */
  poolSize?: number;
  /** Deadline for the start, in ms. Default 30 000. */
  startTimeoutMs?: number;
}

/** A running local PgBouncer, see {@link startPgBouncer}. */
export interface PgBouncerServer {
  /** `postgres://<user>@127.0.0.1:PORT/<database>`: the upstream URL with PgBouncer's address. */
  readonly url: string;
  readonly port: number;
  /** Its temp dir (config, userlist), removed by `close()`. Diagnostics. */
  readonly dir: string;
  /** Kills PgBouncer and removes its temp dir. Idempotent; never throws. */
  close(): Promise<void>;
}

const INSTALL =
  'install PgBouncer (Debian/Ubuntu: apt-get install -y pgbouncer; the binary is /usr/sbin/pgbouncer)';

/**
 * Starts a local PgBouncer in front of `upstreamUrl` (transaction pooling by default), with the
 * same process-group, `--pdeathsig` and reaper guarantees as the local servers. `auth_type =
 * trust`, listening on 127.0.0.1 on a free port, every database name forwarded to the upstream,
 * a small pool (4) so that consecutive transactions of one client land on different server
 * connections. Local binary only (no env-var or container strategy, no faults). Runs as the
 * `postgres` user when running as root (PgBouncer refuses root).
 *
 * @example
 * const pg = await startPostgres({ strategy: 'managed' });
 * const bouncer = await startPgBouncer({ upstreamUrl: pg.url });
 * const pool = new pg.Pool({ connectionString: bouncer.url });
 * await bouncer.close();
 */
export async function startPgBouncer(options: PgBouncerOptions): Promise<PgBouncerServer> {
  const binary = findBinary('pgbouncer', ['/usr/sbin', '/usr/local/sbin', '/usr/bin']);
  if (!binary) {
    throw new ServerNotInstalledError(
      `@fleetcron/testkit cannot start pgbouncer: no pgbouncer binary was found. ${INSTALL}.`,
    );
  }
  const upstream = new URL(options.upstreamUrl);
  const user = decodeURIComponent(upstream.username || 'postgres');
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  const runAs = isRoot ? (lookupUser('postgres') ?? lookupUser('nobody')) : undefined;
  if (isRoot && !runAs) {
    throw new ServerNotInstalledError(
      '@fleetcron/testkit cannot start pgbouncer: running as root, but there is no `postgres` user to run it as.',
    );
  }
  reapStaleOnce();
  const dir = new ServerDir(tmpdir(), runAs);
  const ini = join(dir.path, 'pgbouncer.ini');
  const userlist = join(dir.path, 'userlist.txt');
  writeFileSync(userlist, `"${user.replace(/"/g, '""')}" ""\n`);
  const { process: proc, ports } = await startLocal(dir, 1, ([port]) => {
    writeFileSync(
      ini,
      [
        '[databases]',
        `* = host=${upstream.hostname} port=${upstream.port || 5432}`,
        '',
        '[pgbouncer]',
        'listen_addr = 127.0.0.1',
        `listen_port = ${port}`,
        "unix_socket_dir = ''",
        'auth_type = trust',
        `auth_file = ${userlist}`,
        `pool_mode = ${options.poolMode ?? 'transaction'}`,
        `default_pool_size = ${options.poolSize ?? 4}`,
        'max_client_conn = 200',
        'ignore_startup_parameters = extra_float_digits,options,statement_timeout',
        // Reconnect quickly after an upstream restart (default 15 s).
        'server_login_retry = 1',
        'server_connect_timeout = 5',
        '',
      ].join('\n'),
    );
    return {
      name: 'pgbouncer',
      command: binary,
      args: [ini],
      ...(runAs ? { runAs } : {}),
      cwd: dir.path,
      readyProbe: async () => {
        try {
          await withPgClient(withPort(options.upstreamUrl, port as number), (c) =>
            c.query('SELECT 1'),
          );
          return true;
        } catch {
          return false;
        }
      },
      startTimeoutMs: options.startTimeoutMs ?? 30_000,
      stopSignal: 'SIGINT',
      dir,
    };
  });
  const port = ports[0] as number;
  let closing: Promise<void> | undefined;
  return {
    url: withPort(options.upstreamUrl, port),
    port,
    dir: dir.path,
    close: () => {
      closing ??= (async () => {
        try {
          await proc.kill();
        } catch {
          // close never throws
        } finally {
          dir.remove();
        }
      })();
      return closing;
    },
  };
}

function withPort(url: string, port: number): string {
  const u = new URL(url);
  u.hostname = '127.0.0.1';
  u.port = String(port);
  return u.toString();
}
