import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { binaryVersion, findBinary } from '../binaries.js';
import { ServerNotInstalledError } from '../errors.js';
import { etcdHealthy } from '../etcd.js';
import { LocalProcess } from '../local-process.js';
import { freePort } from '../ports.js';
import { reapStaleOnce, ServerDir } from '../temp-dir.js';
import { waitFor } from '../wait.js';
import { MemberSet } from './member-set.js';

/** Options of {@link startEtcdCluster}. */
export interface EtcdClusterOptions {
  /** Number of members, 1 to 7. Default 3. */
  members?: number;
  /** Raft heartbeat interval in ms (`--heartbeat-interval`). Default 100 (etcd's default). */
  heartbeatMs?: number;
  /** Raft election timeout in ms (`--election-timeout`). Default 1000 (etcd's default). */
  electionTimeoutMs?: number;
  /** Deadline in ms for the cluster to start (and for each member's restart). Default 30 000. */
  startTimeoutMs?: number;
}

/** One member of an {@link EtcdCluster}. */
export interface EtcdMember {
  /** `n1`, `n2`, ... */
  readonly name: string;
  /** Its client endpoint, `http://127.0.0.1:PORT`. */
  readonly endpoint: string;
  /** `running`, `paused` (SIGSTOP) or `stopped` (killed or stopped). */
  readonly state: 'running' | 'paused' | 'stopped';
}

/**
 * A throwaway etcd cluster of local members on distinct loopback ports; see
 * {@link startEtcdCluster}. Members are addressed by index (0-based, the order of `members`).
 */
export interface EtcdCluster {
  /** Every member's client endpoint: `new Etcd3({ hosts: cluster.endpoints })`. */
  readonly endpoints: readonly string[];
  readonly members: readonly EtcdMember[];
  /** `etcd` version, e.g. `3.4.23`. */
  readonly version: string;
  /** The election timeout the members run with, in ms. */
  readonly electionTimeoutMs: number;
  /**
   * Index of the member that is leader now, as seen by a quorum of running members; waits up to
   * `timeoutMs` (default 10 000) for one.
   */
  leader(timeoutMs?: number): Promise<number>;
  /** SIGKILL of member `index` (a crash: no clean leave). Resolves when its processes are gone. */
  kill(index: number): Promise<void>;
  /** SIGSTOP of member `index`: it keeps its sockets but answers nothing. */
  pause(index: number): Promise<void>;
  /** SIGCONT of a paused member. */
  resume(index: number): Promise<void>;
  /** Starts a killed member again with its data; resolves when it reports healthy. */
  start(index: number): Promise<void>;
  /** Kills every member and removes the temp dirs. Idempotent. */
  close(): Promise<void>;
}

function findEtcd(): string | undefined {
  return findBinary('etcd', ['/usr/bin', '/usr/local/bin', '/opt/homebrew/bin']);
}

/** The member ids of the one answering at `endpoint` and of its leader (etcd's status call). */
async function memberStatus(endpoint: string): Promise<{ self: string; leader: string }> {
  const response = await fetch(`${endpoint}/v3/maintenance/status`, {
    method: 'POST',
    body: '{}',
    signal: AbortSignal.timeout(1000),
  });
  const body = (await response.json()) as { header?: { member_id?: string }; leader?: string };
  if (!body.header?.member_id || !body.leader) throw new Error(`no status from ${endpoint}`);
  return { self: body.header.member_id, leader: body.leader };
}

/**
 * Starts an etcd cluster of `members` local processes (default 3), each on its own client and
 * peer loopback ports, data on `/dev/shm` when present; resolves once every member reports
 * healthy (which needs an elected leader). Local binaries only. Fault controls per member:
 * {@link EtcdCluster.kill}, `pause`, `resume`, `start`, and {@link EtcdCluster.leader} to find
 * whom to fail.
 *
 * Each member runs in its own process group under `setpriv --pdeathsig`, with an owner file in
 * its temp dir, like every testkit server: it dies with the test process, and a later run reaps
 * it after a kill -9.
 *
 * @example
 * const cluster = await startEtcdCluster();
 * const client = new Etcd3({ hosts: [...cluster.endpoints] });
 * await cluster.kill(await cluster.leader());
 */
export async function startEtcdCluster(options: EtcdClusterOptions = {}): Promise<EtcdCluster> {
  const count = options.members ?? 3;
  const heartbeatMs = options.heartbeatMs ?? 100;
  const electionTimeoutMs = options.electionTimeoutMs ?? 1000;
  const startTimeoutMs = options.startTimeoutMs ?? 30_000;
  if (!Number.isInteger(count) || count < 1 || count > 7) {
    throw new RangeError(`members must be an integer from 1 to 7, got ${count}`);
  }
  const binary = findEtcd();
  if (!binary) {
    throw new ServerNotInstalledError(
      'startEtcdCluster needs a local etcd (3.4+): install it, e.g. `apt-get install -y etcd-server`.',
    );
  }
  reapStaleOnce();
  const ports: number[] = [];
  while (ports.length < count * 2) {
    const port = await freePort();
    if (!ports.includes(port)) ports.push(port);
  }
  const names = Array.from({ length: count }, (_, i) => `n${i + 1}`);
  const peer = (i: number) => `http://127.0.0.1:${ports[count + i]}`;
  const endpoints = names.map((_, i) => `http://127.0.0.1:${ports[i]}`);
  const initialCluster = names.map((name, i) => `${name}=${peer(i)}`).join(',');
  const root = existsSync('/dev/shm') ? '/dev/shm' : tmpdir();
  const set = new MemberSet(
    names.map((name, i) => {
      const dir = new ServerDir(root);
      const endpoint = endpoints[i] as string;
      const proc = new LocalProcess({
        name: `etcd member ${name}`,
        command: binary,
        args: [
          ...['--name', name, '--data-dir', join(dir.path, 'data')],
          ...['--listen-client-urls', endpoint, '--advertise-client-urls', endpoint],
          ...['--listen-peer-urls', peer(i), '--initial-advertise-peer-urls', peer(i)],
          ...['--initial-cluster', initialCluster, '--initial-cluster-state', 'new'],
          ...['--heartbeat-interval', String(heartbeatMs)],
          ...['--election-timeout', String(electionTimeoutMs)],
          ...['--logger', 'zap', '--log-level', 'warn'],
        ],
        cwd: dir.path,
        readyProbe: () => etcdHealthy(endpoint, 500),
        startTimeoutMs,
        stopSignal: 'SIGTERM',
        dir,
      });
      return { name, proc, dir };
    }),
  );
  await set.startAll();
  const leader = async (timeoutMs = 10_000): Promise<number> =>
    waitFor(
      async () => {
        const running = set.running();
        const seen = await Promise.all(
          running.map((i) => memberStatus(endpoints[i] as string).catch(() => undefined)),
        );
        const ids = new Map<string, number>();
        for (const [k, status] of seen.entries()) {
          if (status) ids.set(status.self, running[k] as number);
        }
        const votes = new Map<string, number>();
        for (const status of seen) {
          if (status) votes.set(status.leader, (votes.get(status.leader) ?? 0) + 1);
        }
        for (const [id, n] of votes) {
          const index = ids.get(id);
          if (index !== undefined && n > count / 2) return index + 1; // truthy
        }
        return 0;
      },
      { timeoutMs, intervalMs: 50, message: 'an etcd leader seen by a quorum' },
    ).then((found) => found - 1);
  return {
    endpoints,
    get members() {
      return names.map((name, i) => ({
        name,
        endpoint: endpoints[i] as string,
        state: set.state(i),
      }));
    },
    version: await binaryVersion(binary),
    electionTimeoutMs,
    leader,
    kill: (index) => set.kill(index),
    pause: (index) => set.pause(index),
    resume: (index) => set.resume(index),
    start: (index) => set.start(index),
    close: () => set.close(),
  };
}
