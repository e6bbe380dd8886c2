import { execFile } from 'node:child_process';
import { accessSync, appendFileSync, constants, realpathSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { binaryVersion, findPostgresBinDir, lookupUser } from '../binaries.js';
import { ServerNotInstalledError, ServerStartError } from '../errors.js';
import { LocalProcess } from '../local-process.js';
import { withPgClient } from '../pg-admin.js';
import { initDataDir } from '../pg-template.js';
import { freePort } from '../ports.js';
import { reapStaleOnce, ServerDir } from '../temp-dir.js';
import { waitFor } from '../wait.js';
import { MemberSet } from './member-set.js';

/** Options of {@link startPostgresReplicated}. */
export interface PostgresReplicatedOptions {
  /**
   * `true`: the standby is synchronous (`synchronous_standby_names` names it, commits wait for its
   * flush: `synchronous_commit = on`), so a commit the primary answered survives a promotion.
   * Default `false`: asynchronous streaming replication.
   */
  synchronous?: boolean;
  /** Deadline in ms for each server to start and for the standby to stream. Default 60 000. */
  startTimeoutMs?: number;
}

/**
 * A PostgreSQL primary and one streaming standby from local binaries; see
 * {@link startPostgresReplicated}. Index 0 is the server started as primary, 1 the standby.
 */
export interface PostgresReplicated {
  /** URLs of the two servers (superuser, database `postgres`), primary first. */
  readonly urls: readonly [string, string];
  /** Their ports, primary first. */
  readonly ports: readonly [number, number];
  /** Whether the standby was made synchronous. */
  readonly synchronous: boolean;
  /** `postgres` version, e.g. `15.10`. */
  readonly version: string;
  /**
   * SIGKILL of server `index` and every backend of it (a crash: no shutdown checkpoint).
   * Resolves when its processes are gone.
   */
  kill(index: 0 | 1): Promise<void>;
  /** SIGSTOP of server `index` and all its backends. */
  pause(index: 0 | 1): Promise<void>;
  /** SIGCONT of a paused server. */
  resume(index: 0 | 1): Promise<void>;
  /**
   * Promotes server `index` (default 1, the standby started with the pair; after a
   * {@link PostgresReplicated.rejoin} either can be the standby) with `pg_ctl promote -w`: it
   * leaves recovery and accepts writes. Resolves when `pg_is_in_recovery()` answers false. A
   * synchronous pair's promoted server does not wait for a standby until one rejoins (it has
   * none): commits go on, as with Patroni's non-strict synchronous mode.
   */
  promote(index?: 0 | 1): Promise<void>;
  /**
   * Rebuilds the killed server `index` as a streaming standby of the other one (now the primary,
   * e.g. after {@link PostgresReplicated.promote}): its data dir is replaced by a
   * `pg_basebackup -R` of the primary, and it is started again. When the pair is synchronous the
   * primary is then made to wait for it (`synchronous_standby_names`), as before the failover.
   * Resolves when it streams (synchronous: with `sync_state = 'sync'`). For a second failover in
   * one run.
   */
  rejoin(index: 0 | 1): Promise<void>;
  /**
   * Waits until the standby has replayed everything the primary has written (its replay LSN
   * reaches the primary's current LSN). For tests that need the standby caught up before a fault.
   */
  waitCaughtUp(timeoutMs?: number): Promise<void>;
  /** Kills both servers and removes their temp dirs. Idempotent. */
  close(): Promise<void>;
}

const READY = /database system is ready to accept (read-only )?connections/;

function runAsPostgresUser(): { uid: number; gid: number } | undefined {
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  if (!isRoot) return undefined;
  const user = lookupUser('postgres');
  if (!user) {
    throw new ServerNotInstalledError(
      'startPostgresReplicated runs as root but finds no `postgres` user to run the servers as (PostgreSQL refuses root): install the server package, e.g. `apt-get install -y postgresql-15`.',
    );
  }
  return user;
}

/** Runs a PostgreSQL client tool (as `runAs`), rejecting with its output on failure. */
function runTool(
  file: string,
  args: string[],
  runAs: { uid: number; gid: number } | undefined,
  timeoutMs: number,
): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile(file, args, { timeout: timeoutMs, ...(runAs ?? {}) }, (error, stdout, stderr) => {
      if (!error) resolve();
      else reject(new ServerStartError(`${file} failed: ${error.message}`, `${stdout}${stderr}`));
    });
  });
}

/**
 * The path of PostgreSQL tool `name` (`pg_basebackup`, `pg_ctl`): beside `postgres` in `binDir`,
 * else beside the file a symlinked `postgres` points at (`/usr/local/bin/postgres` ->
 * `/usr/lib/postgresql/15/bin/postgres`).
 */
function postgresTool(binDir: string, name: string): string {
  const candidates = [
    join(binDir, name),
    join(dirname(realpathSync(join(binDir, 'postgres'))), name),
  ];
  for (const file of candidates) {
    try {
      accessSync(file, constants.X_OK);
      return file;
    } catch {
      // next
    }
  }
  throw new ServerNotInstalledError(
    `startPostgresReplicated needs ${name} beside postgres (looked in ${candidates.join(', ')}): install the PostgreSQL server package, e.g. \`apt-get install -y postgresql-15\`, or set FLEETCRON_TESTKIT_PG_BIN to the directory holding postgres, initdb, pg_basebackup and pg_ctl.`,
  );
}

function serverArgs(dataDir: string, dir: string, port: number, extra: string[]): string[] {
  return [
    ...['-D', dataDir, '-p', String(port), '-k', dir],
    ...['-c', 'listen_addresses=127.0.0.1', '-c', 'fsync=off', '-c', 'max_connections=200'],
    ...['-c', 'dynamic_shared_memory_type=mmap', '-c', 'wal_level=replica'],
    ...extra,
  ];
}

/**
 * Starts a PostgreSQL primary and a streaming standby made from it with `pg_basebackup -R`
 * (local binaries, trust authentication on 127.0.0.1), synchronous or asynchronous by option.
 * Resolves when the standby streams from the primary. Fault controls: {@link
 * PostgresReplicated.kill} and `pause` of either server, {@link PostgresReplicated.promote} of
 * the standby. Each server runs in its own process group under `setpriv --pdeathsig`, with an
 * owner file in its temp dir, like every testkit server.
 *
 * @example
 * const pair = await startPostgresReplicated({ synchronous: true });
 * await pair.kill(0);
 * await pair.promote(); // pair.urls[1] now accepts writes
 */
export async function startPostgresReplicated(
  options: PostgresReplicatedOptions = {},
): Promise<PostgresReplicated> {
  const synchronous = options.synchronous ?? false;
  const startTimeoutMs = options.startTimeoutMs ?? 60_000;
  const binDir = findPostgresBinDir();
  if (!binDir) {
    throw new ServerNotInstalledError(
      'startPostgresReplicated needs local PostgreSQL server binaries (postgres, initdb, pg_basebackup, pg_ctl): install them, e.g. `apt-get install -y postgresql-15`, or set FLEETCRON_TESTKIT_PG_BIN to their directory.',
    );
  }
  const runAs = runAsPostgresUser();
  const basebackup = postgresTool(binDir, 'pg_basebackup');
  const pgCtl = postgresTool(binDir, 'pg_ctl');
  reapStaleOnce();
  const version = await binaryVersion(join(binDir, 'postgres'));
  const ports = [await freePort(), await freePort()] as [number, number];
  if (ports[0] === ports[1]) ports[1] = await freePort();
  const urls = ports.map((p) => `postgres://postgres@127.0.0.1:${p}/postgres`) as [string, string];
  const standbyName = 'fleetcron_standby';
  // synchronous_standby_names is set with ALTER SYSTEM (below, and on a rejoin), not on the
  // command line, which would override a RESET at promotion: either server can be the primary
  const primaryExtra = synchronous ? ['-c', 'synchronous_commit=on'] : [];
  /** One server of the pair: its temp dir (owned by the server's user) and its process. */
  const member = (index: 0 | 1) => {
    const dir = new ServerDir(tmpdir(), runAs);
    const dataDir = join(dir.path, 'data');
    const name = index === 0 ? 'primary' : 'standby';
    const proc = new LocalProcess({
      name: `postgres ${name}`,
      command: join(binDir, 'postgres'),
      args: serverArgs(
        dataDir,
        dir.path,
        ports[index],
        // cluster_name is the standby's application_name for synchronous_standby_names.
        index === 0 ? primaryExtra : ['-c', `cluster_name=${standbyName}`],
      ),
      ...(runAs ? { runAs } : {}),
      cwd: dir.path,
      readyLog: READY,
      startTimeoutMs,
      stopSignal: 'SIGINT',
      crashSignal: 'SIGKILL',
      dir,
    });
    return { name, proc, dir, dataDir };
  };
  const primary = member(0);
  const standby = member(1);
  const set = new MemberSet([primary, standby]);
  const inRecovery = (index: 0 | 1) =>
    withPgClient(urls[index], async (client) => {
      const { rows } = await client.query<{ r: boolean }>('SELECT pg_is_in_recovery() AS r');
      return rows[0]?.r === true;
    });
  const members = [primary, standby] as const;
  /** Waits until the standby of `primaryIndex` streams from it (synchronous pair: as `sync`). */
  const streaming = (primaryIndex: 0 | 1) =>
    waitFor(
      () =>
        withPgClient(urls[primaryIndex], async (client) => {
          const { rows } = await client.query<{ state: string; sync_state: string }>(
            'SELECT state, sync_state FROM pg_stat_replication WHERE application_name = $1',
            [standbyName],
          );
          const row = rows[0];
          return row?.state === 'streaming' && (!synchronous || row.sync_state === 'sync');
        }),
      { timeoutMs: startTimeoutMs, message: 'the standby streaming from the primary' },
    );
  /**
   * Makes commits on server `primaryIndex` wait for the standby's flush (or, `on` false, no
   * more: a promoted server has no standby until one rejoins, as Patroni's non-strict
   * synchronous mode does).
   */
  const requireStandby = (primaryIndex: 0 | 1, on = true) =>
    withPgClient(urls[primaryIndex], async (client) => {
      await client.query(
        on
          ? `ALTER SYSTEM SET synchronous_standby_names = '${standbyName}'`
          : 'ALTER SYSTEM RESET synchronous_standby_names',
      );
      await client.query('SELECT pg_reload_conf()');
    });
  /** `pg_basebackup -R` of server `from` into `into`'s (empty) data dir. */
  const baseBackup = (from: 0 | 1, into: 0 | 1) =>
    runTool(
      basebackup,
      [
        ...['-D', members[into].dataDir, '-h', '127.0.0.1', '-p', String(ports[from])],
        ...['-U', 'postgres', '-R', '-X', 'stream', '-c', 'fast'],
      ],
      runAs,
      startTimeoutMs,
    );
  try {
    await initDataDir(binDir, version, primary.dataDir, runAs, startTimeoutMs);
    await set.start(0);
    await baseBackup(0, 1);
    await set.start(1);
    if (synchronous) await requireStandby(0);
    await streaming(0);
  } catch (error) {
    await set.close().catch(() => {});
    throw error;
  }
  return {
    urls,
    ports,
    synchronous,
    version,
    kill: (index) => set.kill(index),
    pause: (index) => set.pause(index),
    resume: (index) => set.resume(index),
    async promote(index = 1) {
      const dataDir = members[index].dataDir;
      await runTool(
        pgCtl,
        ['promote', '-w', '-t', String(Math.ceil(startTimeoutMs / 1000)), '-D', dataDir],
        runAs,
        startTimeoutMs,
      );
      await waitFor(async () => !(await inRecovery(index)), {
        timeoutMs: startTimeoutMs,
        message: 'the promoted standby out of recovery',
      });
      // no standby follows it yet (its data dir may carry the setting of a rejoin)
      if (synchronous) await requireStandby(index, false);
    },
    async rejoin(index) {
      const from = index === 0 ? 1 : 0;
      if (set.state(index) !== 'stopped') {
        throw new Error(`rejoin(${index}): server ${index} runs; kill it first`);
      }
      // not rmSync: removing a data dir full of WAL blocked this process's event loop for 1.7 s,
      // and with it every testkit StallLink forwarding the clients' traffic in this process
      await rm(members[index].dataDir, { recursive: true, force: true });
      await baseBackup(from, index);
      // the name the primary's synchronous_standby_names waits for (server 1 has it on its
      // command line already)
      if (index === 0) {
        appendFileSync(
          join(members[0].dataDir, 'postgresql.auto.conf'),
          `cluster_name = '${standbyName}'\n`,
        );
      }
      await set.start(index);
      if (synchronous) await requireStandby(from);
      await streaming(from);
    },
    async waitCaughtUp(timeoutMs = 30_000) {
      const target = await withPgClient(urls[0], async (client) => {
        const { rows } = await client.query<{ lsn: string }>(
          'SELECT pg_current_wal_lsn()::text AS lsn',
        );
        return rows[0]?.lsn as string;
      });
      await waitFor(
        () =>
          withPgClient(urls[1], async (client) => {
            const { rows } = await client.query<{ ok: boolean }>(
              'SELECT pg_last_wal_replay_lsn() >= $1::pg_lsn AS ok',
              [target],
            );
            return rows[0]?.ok === true;
          }),
        { timeoutMs, message: `the standby replayed up to ${target}` },
      );
    },
    close: () => set.close(),
  };
}
