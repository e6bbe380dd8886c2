import {
  type CampaignRequest,
  type CampaignResult,
  type Elector,
  type ElectorCapabilities,
  InvalidOptionError,
  type LeaderInfo,
} from '@fleetcron/core';
import { assertCampaign } from '@fleetcron/core/backend';
import {
  encodeKeyPart,
  type RedisClient,
  RedisCommands,
  RedisScript,
  resolveCommandTimeoutMs,
  resolvePrefix,
  type WriteTrace,
} from '@fleetcron/redis-shared';
import { CAMPAIGN, LEADER, RENEW, RESIGN } from './elector-scripts.js';
import { confirmReplicated, type ReplicaAckOptions, resolveReplicaAck } from './replica-ack.js';

/** Options of {@link RedisElector}. */
export interface RedisElectorOptions {
  /** First part of every key's hash tag; must not contain `{` or `}`. Default `fleetcron`. */
  prefix?: string;
  /** Longest wait for one Redis call before it throws `BackendUnavailableError`, ms. Default 5000. */
  commandTimeoutMs?: number;
  /**
   * Declare that the server keeps every write across a restart (`appendonly yes`,
   * `appendfsync always`). Sets `capabilities.durable`. Default `false`.
   */
  durable?: boolean;
  /**
   * Opt-in acknowledgement by replicas, as `RedisLock`'s option of the same name: after a
   * campaign that won and after a renewal, the elector sends `WAIT replicas timeoutMs` on the
   * connection that wrote it. A win not acknowledged in time is handed back (the leader key
   * deleted if it still holds that term) and `campaign()` throws `ReplicaAckError`; a renewal not
   * acknowledged throws `ReplicaAckError`, so the term is not extended (core's `Candidate` retries,
   * and loses the term at its local deadline unless a later renewal is acknowledged). One `WAIT`
   * round trip per win and renewal; `timeoutMs` must be below `commandTimeoutMs`.
   */
  replicaAck?: ReplicaAckOptions;
}

/** The two keys of one election: `{prefix:election}:elector` and `...:elector-term`. */
export function electionKeys(prefix: string, election: string): [leader: string, term: string] {
  const tag = `{${prefix}:${encodeKeyPart(election)}}`;
  return [`${tag}:elector`, `${tag}:elector-term`];
}

const campaignScript = new RedisScript(CAMPAIGN);
const renewScript = new RedisScript(RENEW);
const resignScript = new RedisScript(RESIGN);
const leaderScript = new RedisScript(LEADER);

/**
 * An {@link Elector} on Redis (standalone, Sentinel or Cluster, through your ioredis client):
 * each step is one `EVALSHA` of a Lua script judged by the Redis clock (`TIME`). Terms are
 * `max(last + 1, Redis time in µs)`, so they keep increasing even when a restart without
 * persistence loses the counter. Use it with core's `Candidate`.
 */
export class RedisElector implements Elector {
  readonly backend = 'redis';
  readonly capabilities: ElectorCapabilities;
  private readonly prefix: string;
  private readonly commands: RedisCommands;
  /** The `replicaAck` option: wins and renewals count only once replicas acknowledged them. */
  private readonly replicaAck: ReplicaAckOptions | undefined;

  /**
   * @param redis An ioredis `Redis` or `Cluster` client; never closed here. Without an
   *   `'error'` listener of yours, a no-op one is attached so an error cannot crash the process.
   */
  constructor(
    private readonly redis: RedisClient,
    options: RedisElectorOptions = {},
  ) {
    this.prefix = resolvePrefix(options.prefix);
    const timeoutMs = resolveCommandTimeoutMs(options.commandTimeoutMs);
    if (options.durable !== undefined && typeof options.durable !== 'boolean') {
      throw new InvalidOptionError('durable', `must be a boolean, got ${String(options.durable)}.`);
    }
    this.capabilities = {
      minTtlMs: 1,
      ttlGranularityMs: 1,
      durable: options.durable ?? false,
      clock: 'backend',
    };
    this.commands = new RedisCommands(redis, timeoutMs);
    this.replicaAck = resolveReplicaAck(options.replicaAck, timeoutMs);
  }

  async campaign(request: CampaignRequest): Promise<CampaignResult> {
    assertCampaign(request, this.capabilities, this.backend);
    const { election, id } = request;
    const ttlMs = Math.ceil(request.ttlMs);
    const trace: WriteTrace | undefined = this.replicaAck ? {} : undefined;
    const reply = (await this.commands.call(
      'campaign',
      (signal) =>
        campaignScript.run(
          this.redis,
          electionKeys(this.prefix, election),
          [id, ttlMs],
          signal,
          trace,
        ),
      request.signal,
    )) as string[];
    if (reply[0] === 'elected') {
      const leader = { election, id, term: Number(reply[1]), expiresAt: Number(reply[2]) };
      if (trace) await this.confirmWin(leader, trace.socket, request.signal);
      return { status: 'elected', leader };
    }
    return {
      status: 'follower',
      leader: { election, id: reply[3] ?? '', term: Number(reply[1]), expiresAt: Number(reply[2]) },
      now: Number(reply[4]),
    };
  }

  async renew(term: LeaderInfo, ttlMs: number): Promise<LeaderInfo | null> {
    const ms = Math.ceil(ttlMs);
    const [leaderKey] = electionKeys(this.prefix, term.election);
    const trace: WriteTrace | undefined = this.replicaAck ? {} : undefined;
    const reply = (await this.commands.call('renew', (signal) =>
      renewScript.run(this.redis, [leaderKey], [term.term, term.id, ms], signal, trace),
    )) as string | null;
    if (reply === null) return null;
    if (trace && this.replicaAck) {
      // not handed back: the caller still holds the term until its own deadline, which an
      // earlier acknowledged win or renewal set; the next acknowledged renewal extends it
      await confirmReplicated(this.commands, this.replicaAck, 'renew', [trace.socket]);
    }
    return { ...term, expiresAt: Number(reply) };
  }

  async resign(term: LeaderInfo): Promise<boolean> {
    const [leaderKey] = electionKeys(this.prefix, term.election);
    const reply = await this.commands.call('resign', (signal) =>
      resignScript.run(this.redis, [leaderKey], [term.term], signal),
    );
    return reply === 1;
  }

  async leader(election: string): Promise<LeaderInfo | null> {
    const [leaderKey] = electionKeys(this.prefix, election);
    const reply = (await this.commands.call('leader', (signal) =>
      leaderScript.run(this.redis, [leaderKey], [], signal),
    )) as string[] | null;
    if (!reply) return null;
    return { election, id: reply[2] ?? '', term: Number(reply[0]), expiresAt: Number(reply[1]) };
  }

  /**
   * With `replicaAck`: waits for the replicas to acknowledge the win of `leader` (written on
   * `socket`). When they do not in time, hands the win back (resign by term: the leader key is
   * deleted only while it still holds that term) and throws the `ReplicaAckError` (or the
   * `BackendUnavailableError` of a failed `WAIT`): the caller must not lead.
   */
  private async confirmWin(
    leader: LeaderInfo,
    socket: object | undefined,
    signal: AbortSignal | undefined,
  ): Promise<void> {
    try {
      await confirmReplicated(this.commands, this.replicaAck!, 'campaign', [socket], signal);
    } catch (error) {
      await this.resign(leader).catch(() => false);
      throw error;
    }
  }

  /** Nothing to free: the elector holds no timers or connections of its own. */
  async close(): Promise<void> {}
}
