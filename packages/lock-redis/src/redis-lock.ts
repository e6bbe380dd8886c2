import {
  assertCatchUpClaim,
  assertPositiveMs,
  type ClaimedFire,
  type ClaimRequest,
  type ClaimResult,
  DEFAULT_EARLY_TOLERANCE_MS,
  DEFAULT_WINDOW_MS,
  InvalidOptionError,
  type Lease,
  type Lock,
  type LockCapabilities,
  type LockInspection,
  type LostReason,
} from '@fleetcron/core';
import {
  type RedisClient,
  RedisCommands,
  RedisScript,
  resolveCommandTimeoutMs,
  resolvePrefix,
} from '@fleetcron/redis-shared';
import { type LockKeys, lockKeys } from './keys.js';
import { CLAIM, EXTEND, INSPECT, RELEASE, WITHDRAW } from './scripts.js';

/** Options of {@link RedisLock}. */
export interface RedisLockOptions {
  /** First part of every key's hash tag; must not contain `{` or `}`. Default `fleetcron`. */
  prefix?: string;
  /** Claim window in ms: fires older than this (by the Redis clock) are stale. Default 5 minutes. */
  windowMs?: number;
  /**
   * A claim for a fire more than this far ahead of the Redis clock (`TIME`) is refused `early`
   * (the scheduler claims it again when the fleet's clock reaches it), in whole ms. Default 250.
   */
  earlyToleranceMs?: number;
  /**
   * Longest wait for one Redis call before it fails with `BackendUnavailableError`, in ms.
   * Applied by racing the call against a timer, whatever the client's own settings. Default 5000.
   */
  commandTimeoutMs?: number;
  /**
   * Declare that the server keeps every write across a restart (`appendonly yes` with
   * `appendfsync always`). Sets `capabilities.durable`; check it with
   * {@link RedisLock.verifyDurability}. Default `false`.
   */
  durable?: boolean;
}

/** What {@link RedisLock.verifyDurability} found on the server (each primary, for a Cluster). */
export interface DurabilityReport {
  /** `true` when every node runs `appendonly yes` and `appendfsync always`. */
  durable: boolean;
  /** `appendonly` / `appendfsync` per node, in the order the client lists them. */
  nodes: { appendonly: string; appendfsync: string }[];
}

const claimScript = new RedisScript(CLAIM);
const extendScript = new RedisScript(EXTEND);
const releaseScript = new RedisScript(RELEASE);
const inspectScript = new RedisScript(INSPECT);
const withdrawScript = new RedisScript(WITHDRAW);

const slotOf = (lease: Pick<Lease, 'exclusive' | 'fireAt'>): string =>
  lease.exclusive ? 'x' : String(lease.fireAt);

const parseRecord = (member: string): ClaimedFire => {
  const match = /^(-?\d+)\|([wb])\|(\d*)\|([\s\S]*)$/.exec(member);
  if (!match) throw new Error(`unexpected claim record ${JSON.stringify(member)}`);
  return {
    fireAt: Number(match[1]),
    outcome: match[2] === 'w' ? 'won' : 'busy',
    token: match[3] ? Number(match[3]) : null,
    owner: match[4] ?? '',
  };
};

/**
 * A {@link Lock} on Redis (standalone, Sentinel or Cluster, through an ioredis client the user
 * owns). Each claim is one `EVALSHA` of a Lua script that runs atomically and judges time by
 * the Redis clock (`TIME`). A job's keys share the hash tag `{prefix:key}`, so one job lives
 * in one cluster slot. Requires Redis >= 5 (script effects replication).
 */
export class RedisLock implements Lock {
  readonly backend = 'redis';
  readonly capabilities: LockCapabilities;
  readonly windowMs: number;
  private readonly prefix: string;
  private readonly commands: RedisCommands;

  /**
   * @param redis An ioredis `Redis` or `Cluster` client. The lock never closes it. Attach an
   *   `'error'` listener to it; if it has none, the lock attaches a no-op one so a connection
   *   error can never crash the process.
   */
  constructor(
    private readonly redis: RedisClient,
    options: RedisLockOptions = {},
  ) {
    this.prefix = resolvePrefix(options.prefix);
    this.windowMs = options.windowMs ?? DEFAULT_WINDOW_MS;
    assertPositiveMs('windowMs', this.windowMs);
    if (!Number.isInteger(this.windowMs)) {
      throw new InvalidOptionError(
        'windowMs',
        `must be a whole number of ms, got ${this.windowMs}.`,
      );
    }
    const commandTimeoutMs = resolveCommandTimeoutMs(options.commandTimeoutMs);
    if (options.durable !== undefined && typeof options.durable !== 'boolean') {
      throw new InvalidOptionError('durable', `must be a boolean, got ${String(options.durable)}.`);
    }
    this.capabilities = {
      minLeaseMs: 1,
      leaseGranularityMs: 1,
      durable: options.durable ?? false,
      clock: 'backend',
      earlyToleranceMs: resolveEarlyTolerance(options.earlyToleranceMs),
      // The mark is a key without TTL: it survives a restart exactly when the server persists.
      durableMark: options.durable ?? false,
    };
    this.commands = new RedisCommands(redis, commandTimeoutMs);
  }

  async claim(request: ClaimRequest): Promise<ClaimResult> {
    const { key, fireAt, owner, exclusive } = request;
    assertFireAt(fireAt);
    assertCatchUpClaim(request);
    const leaseMs = Math.ceil(request.leaseMs);
    assertPositiveMs('leaseMs', leaseMs);
    const keys = this.keysOf(key);
    // Once request.signal is aborted the script cannot run any more, not even from ioredis'
    // offline queue or as a re-send after a reconnect (see README, "A claim given up on").
    const reply = (await this.commands.call(
      'claim',
      (signal) =>
        claimScript.run(
          this.redis,
          [keys.fire + fireAt, keys.fires, keys.leases, keys.token, keys.mark],
          [
            ...[String(fireAt), owner, String(leaseMs), exclusive ? '1' : '0'],
            ...[String(this.windowMs), String(this.capabilities.earlyToleranceMs)],
            request.catchUp ? String(request.catchUp.since) : '',
          ],
          signal,
        ),
      request.signal,
    )) as string[];
    switch (reply[0]) {
      case 'won':
        return {
          status: 'won',
          lease: {
            key,
            fireAt,
            owner,
            token: Number(reply[1]),
            expiresAt: Number(reply[2]),
            exclusive: reply[3] === '1',
          },
          backendTime: Number(reply[4]),
        };
      case 'busy':
        return { status: 'busy', key, fireAt, backendTime: Number(reply[1]) };
      default:
        return {
          status: 'lost',
          key,
          fireAt,
          reason: reply[1] as LostReason,
          backendTime: Number(reply[2]),
        };
    }
  }

  async extend(lease: Lease, leaseMs: number): Promise<Lease | null> {
    const ms = Math.ceil(leaseMs);
    assertPositiveMs('leaseMs', ms);
    const reply = (await this.commands.call('extend', (signal) =>
      extendScript.run(
        this.redis,
        [this.keysOf(lease.key).leases],
        [slotOf(lease), String(lease.token), String(ms)],
        signal,
      ),
    )) as [string, string, string] | null;
    if (!reply) return null;
    return {
      ...lease,
      owner: reply[1],
      expiresAt: Number(reply[0]),
      backendTime: Number(reply[2]),
    };
  }

  async release(lease: Lease): Promise<boolean> {
    const reply = await this.commands.call('release', (signal) =>
      releaseScript.run(
        this.redis,
        [this.keysOf(lease.key).leases],
        [slotOf(lease), String(lease.token)],
        signal,
      ),
    );
    return reply === 1;
  }

  /**
   * Hands back a won claim that will never run: one script deletes the fire's claim record and
   * the lease when they still hold `lease.token` (see {@link Lock.withdraw}).
   */
  async withdraw(lease: Lease): Promise<boolean> {
    const keys = this.keysOf(lease.key);
    const reply = await this.commands.call('withdraw', (signal) =>
      withdrawScript.run(
        this.redis,
        [keys.fire + lease.fireAt, keys.fires, keys.leases],
        [String(lease.fireAt), slotOf(lease), String(lease.token)],
        signal,
      ),
    );
    return reply === 1;
  }

  async inspect(key: string): Promise<LockInspection> {
    const keys = this.keysOf(key);
    const [members, leaseValues, mark] = (await this.commands.call('inspect', (signal) =>
      inspectScript.run(
        this.redis,
        [keys.fires, keys.leases, keys.mark],
        [String(this.windowMs)],
        signal,
      ),
    )) as [string[], string[], string];
    const fires = members.map(parseRecord).sort((a, b) => a.fireAt - b.fireAt);
    const leases: Lease[] = [];
    for (let i = 0; i + 1 < leaseValues.length; i += 2) {
      leases.push(parseLease(key, leaseValues[i] === 'x', leaseValues[i + 1]!));
    }
    leases.sort((a, b) => a.fireAt - b.fireAt);
    return {
      leases,
      newestFireAt: fires.at(-1)?.fireAt ?? null,
      fires,
      mark: mark === '' ? null : Number(mark),
    };
  }

  /**
   * Reads `appendonly` and `appendfsync` with `CONFIG GET` (on every primary of a Cluster).
   * When the lock was built with `durable: true` and the server is not configured for it,
   * throws {@link InvalidOptionError} naming `durable`. Throws `BackendUnavailableError` when the
   * server cannot be asked (unreachable, or `CONFIG` disabled as on some managed services).
   */
  async verifyDurability(): Promise<DurabilityReport> {
    const clients: RedisClient[] =
      'nodes' in this.redis ? this.redis.nodes('master') : [this.redis];
    const nodes = await Promise.all(
      clients.map(async (client) => {
        const reply = (await this.commands.call('verifyDurability', () =>
          client.config('GET', 'append*'),
        )) as string[];
        const config = new Map<string, string>();
        for (let i = 0; i + 1 < reply.length; i += 2) config.set(reply[i]!, reply[i + 1]!);
        return {
          appendonly: config.get('appendonly') ?? '',
          appendfsync: config.get('appendfsync') ?? '',
        };
      }),
    );
    const durable =
      nodes.length > 0 && nodes.every((n) => n.appendonly === 'yes' && n.appendfsync === 'always');
    if (this.capabilities.durable && !durable) {
      throw new InvalidOptionError(
        'durable',
        `the lock was declared durable but the server runs ${nodes
          .map((n) => `appendonly ${n.appendonly}, appendfsync ${n.appendfsync}`)
          .join(
            '; ',
          )}. Run Redis with "appendonly yes" and "appendfsync always", or drop durable: true.`,
      );
    }
    return { durable, nodes };
  }

  /** Nothing to free: the lock holds no timers or connections of its own. */
  async close(): Promise<void> {}

  private keysOf(key: string): LockKeys {
    return lockKeys(this.prefix, key);
  }
}

function assertFireAt(fireAt: unknown): asserts fireAt is number {
  if (!Number.isSafeInteger(fireAt)) {
    throw new InvalidOptionError(
      'fireAt',
      `must be an integer epoch ms (a safe integer), got ${String(fireAt)}.`,
    );
  }
}

function parseLease(key: string, exclusive: boolean, value: string): Lease {
  const match = /^(\d+)\|(-?\d+)\|(-?\d+)\|([\s\S]*)$/.exec(value);
  if (!match) throw new Error(`unexpected lease ${JSON.stringify(value)}`);
  return {
    key,
    fireAt: Number(match[3]),
    owner: match[4] ?? '',
    token: Number(match[1]),
    expiresAt: Number(match[2]),
    exclusive,
  };
}

/** Validates the `earlyToleranceMs` option (a whole, non-negative number of ms). */
function resolveEarlyTolerance(value: number | undefined): number {
  const ms = value ?? DEFAULT_EARLY_TOLERANCE_MS;
  if (typeof ms !== 'number' || !Number.isInteger(ms) || ms < 0) {
    throw new InvalidOptionError(
      'earlyToleranceMs',
      `must be a whole number of ms >= 0, got ${String(value)}.`,
    );
  }
  return ms;
}
