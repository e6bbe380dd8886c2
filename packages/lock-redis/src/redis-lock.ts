import {
  type BatchOptions,
  type ClaimRequest,
  type ClaimResult,
  InvalidOptionError,
  type Lease,
  type Lock,
  type LockCapabilities,
  type LockInspection,
  type MarkReading,
} from '@fleetcron/core';
import { assertBatchSize, assertLockKey, assertPositiveMs } from '@fleetcron/core/backend';
import {
  type GiveUpSignal,
  hashSlot,
  type RedisClient,
  RedisCommands,
  RedisScript,
  type WriteTrace,
} from '@fleetcron/redis-shared';
import { type BatchCall, eachReply, plainCall, planBatch, runBatch } from './batch-calls.js';
import {
  ClaimPacker,
  checkClaim,
  decodeClaimReplies,
  decodeClaimReply,
  decodeReleaseReplies,
  leaseSlotOf,
  parseLease,
  parseRecord,
  ReleasePacker,
} from './claim-codec.js';
import { type DurabilityReport, verifyDurability } from './durability.js';
import { type LockKeys, lockKeys } from './keys.js';
import { REDIS_MAX_BATCH, type RedisLockOptions, resolveLockOptions } from './options.js';
import { decodeMarks, READ_MARKS_CALL_SIZE } from './read-marks.js';
import { confirmReplicated, type ReplicaAckOptions } from './replica-ack.js';
import { CLAIM, EXTEND, INSPECT, READ_MARKS, RELEASE, WITHDRAW } from './scripts.js';

/** Job names whose keys are cached (the set of job names of a fleet is small and fixed). */
const KEY_CACHE_SIZE = 10_000;

const claimScript = new RedisScript(CLAIM);
const extendScript = new RedisScript(EXTEND);
const releaseScript = new RedisScript(RELEASE);
const inspectScript = new RedisScript(INSPECT);
const withdrawScript = new RedisScript(WITHDRAW);
const readMarksScript = new RedisScript(READ_MARKS);

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
  /** The claim script's first ARGV: windowMs and earlyToleranceMs, as sent. */
  private readonly claimHead: [string, string];
  private readonly keyCache = new Map<string, LockKeys>();
  /** The `replicaAck` option: wins and renewals count only once replicas acknowledged them. */
  private readonly replicaAck: ReplicaAckOptions | undefined;

  /**
   * @param redis An ioredis `Redis` or `Cluster` client. The lock never closes it. Attach an
   *   `'error'` listener to it; if it has none, the lock attaches a no-op one so a connection
   *   error can never crash the process.
   */
  constructor(
    private readonly redis: RedisClient,
    options: RedisLockOptions = {},
  ) {
    const resolved = resolveLockOptions(options);
    this.prefix = resolved.prefix;
    this.windowMs = resolved.windowMs;
    this.capabilities = resolved.capabilities;
    this.claimHead = [String(this.windowMs), String(this.capabilities.earlyToleranceMs)];
    this.commands = new RedisCommands(redis, resolved.commandTimeoutMs);
    this.replicaAck = resolved.replicaAck;
  }

  async claim(request: ClaimRequest): Promise<ClaimResult> {
    const leaseMs = checkClaim(request);
    const packer = new ClaimPacker(this.claimHead);
    packer.add(this.keysOf(request.key), request, leaseMs);
    const args = packer.args;
    const trace: WriteTrace | undefined = this.replicaAck ? {} : undefined;
    // Once request.signal is aborted the script cannot run any more, not even from ioredis'
    // offline queue or as a re-send after a reconnect (see README, "A claim given up on").
    const reply = await this.commands.call(
      'claim',
      (signal) => claimScript.run(this.redis, packer.keys, args, signal, trace),
      request.signal,
    );
    const result = decodeClaimReply(reply, request);
    if (trace && result.status === 'won') {
      await this.confirmWins('claim', [result.lease], [trace.socket], request.signal);
    }
    return result;
  }

  /**
   * Claims many fires: one `EVALSHA` per hash slot (one per {@link BATCH_CALL_SIZE} requests on
   * a single node), all written at once, each request answered exactly as {@link claim} would
   * (see {@link Lock.claimMany}). At most `capabilities.maxBatch` requests.
   */
  async claimMany(
    requests: readonly ClaimRequest[],
    options: BatchOptions = {},
  ): Promise<ClaimResult[]> {
    assertBatchSize(requests, REDIS_MAX_BATCH);
    if (requests.length === 0) return [];
    const leaseMs = requests.map(checkClaim);
    const calls = planBatch(
      requests,
      this.slotFinder((request) => this.keysOf(request.key).job),
      () => new ClaimPacker(this.claimHead),
      (call, request, position) => call.add(this.keysOf(request.key), request, leaseMs[position]!),
    );
    const traces = this.replicaAck ? new Map<BatchCall, WriteTrace>() : undefined;
    const results = await this.commands.call(
      'claimMany',
      (signal) =>
        runBatch(
          calls,
          requests.length,
          this.sender(claimScript, signal, traces),
          (call, reply, results: ClaimResult[]) =>
            decodeClaimReplies(reply, requests, call.positions, results),
        ),
      options.signal,
    );
    if (traces) {
      const won: Lease[] = [];
      const sockets: (object | undefined)[] = [];
      for (const call of calls) {
        const before = won.length;
        for (const position of call.positions) {
          const result = results[position]!;
          if (result.status === 'won') won.push(result.lease);
        }
        if (won.length > before) sockets.push(traces.get(call)?.socket);
      }
      if (won.length > 0) await this.confirmWins('claimMany', won, sockets, options.signal);
    }
    return results;
  }

  async extend(lease: Lease, leaseMs: number): Promise<Lease | null> {
    const ms = Math.ceil(leaseMs);
    assertPositiveMs('leaseMs', ms);
    const trace: WriteTrace | undefined = this.replicaAck ? {} : undefined;
    const replies = (await this.commands.call('extend', (signal) =>
      extendScript.run(
        this.redis,
        [this.keysOf(lease.key).job],
        [leaseSlotOf(lease), String(lease.token), String(ms)],
        signal,
        trace,
      ),
    )) as ([string, string, string] | null)[];
    const renewed = extended(lease, replies[0] ?? null);
    if (trace && this.replicaAck && renewed) {
      await confirmReplicated(this.commands, this.replicaAck, 'extend', [trace.socket]);
    }
    return renewed;
  }

  /**
   * Renews many leases, one `EVALSHA` per hash slot as {@link claimMany}: `results[i]` is what
   * `extend(leases[i], leaseMs[i])` would answer.
   */
  async extendMany(
    leases: readonly Lease[],
    leaseMs: readonly number[],
    options: BatchOptions = {},
  ): Promise<(Lease | null)[]> {
    assertBatchSize(leases, REDIS_MAX_BATCH);
    if (!Array.isArray(leaseMs) || leaseMs.length !== leases.length) {
      throw new InvalidOptionError(
        'leaseMs',
        `must hold one lease length per lease (${leases.length}), got ${Array.isArray(leaseMs) ? leaseMs.length : typeof leaseMs}`,
      );
    }
    if (leases.length === 0) return [];
    const ms = leaseMs.map((value) => Math.ceil(value));
    for (const value of ms) assertPositiveMs('leaseMs', value);
    const calls = planBatch(
      leases,
      this.slotFinder((lease) => this.keysOf(lease.key).job),
      plainCall,
      (call, lease, position) => {
        call.keys.push(this.keysOf(lease.key).job);
        call.args.push(leaseSlotOf(lease), String(lease.token), String(ms[position]));
      },
    );
    const traces = this.replicaAck ? new Map<BatchCall, WriteTrace>() : undefined;
    const results = await this.commands.call(
      'extendMany',
      (signal) =>
        runBatch(
          calls,
          leases.length,
          this.sender(extendScript, signal, traces),
          eachReply((position, reply) =>
            extended(leases[position]!, reply as [string, string, string] | null),
          ),
        ),
      options.signal,
    );
    if (traces && this.replicaAck) {
      const sockets = calls
        .filter((call) => call.positions.some((position) => results[position] !== null))
        .map((call) => traces.get(call)?.socket);
      if (sockets.length > 0) {
        await confirmReplicated(
          this.commands,
          this.replicaAck,
          'extendMany',
          sockets,
          options.signal,
        );
      }
    }
    return results;
  }

  async release(lease: Lease): Promise<boolean> {
    const packer = new ReleasePacker();
    packer.add(this.keysOf(lease.key), lease);
    const reply = await this.commands.call('release', (signal) =>
      releaseScript.run(this.redis, packer.keys, packer.args, signal),
    );
    const results: boolean[] = [];
    decodeReleaseReplies(reply, [0], results);
    return results[0]!;
  }

  /**
   * Ends many leases, one `EVALSHA` per hash slot as {@link claimMany}: `results[i]` is what
   * `release(leases[i])` would answer.
   */
  async releaseMany(leases: readonly Lease[], options: BatchOptions = {}): Promise<boolean[]> {
    assertBatchSize(leases, REDIS_MAX_BATCH);
    if (leases.length === 0) return [];
    const calls = planBatch(
      leases,
      this.slotFinder((lease) => this.keysOf(lease.key).job),
      () => new ReleasePacker(),
      (call, lease) => call.add(this.keysOf(lease.key), lease),
    );
    return this.commands.call(
      'releaseMany',
      (signal) =>
        runBatch(
          calls,
          leases.length,
          this.sender(releaseScript, signal),
          (call, reply, results: boolean[]) => decodeReleaseReplies(reply, call.positions, results),
        ),
      options.signal,
    );
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
        [keys.fire + lease.fireAt, keys.fires, keys.job],
        [String(lease.fireAt), leaseSlotOf(lease), String(lease.token)],
        signal,
      ),
    );
    return reply === 1;
  }

  async inspect(key: string): Promise<LockInspection> {
    assertLockKey(key);
    const keys = this.keysOf(key);
    const [members, leaseValues, mark] = (await this.commands.call('inspect', (signal) =>
      inspectScript.run(this.redis, [keys.fires, keys.job], [String(this.windowMs)], signal),
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
   * Reads the marks of many keys (see {@link Lock.readMarks}): one read-only `EVALSHA` per
   * hash slot (per {@link READ_MARKS_CALL_SIZE} keys on a single node), all written at once, so
   * one round trip per node; `backendTime` is the Redis `TIME` of the last call to run. Any
   * number of keys; every key is checked before anything is sent.
   */
  async readMarks(keys: readonly string[], options: BatchOptions = {}): Promise<MarkReading> {
    if (!Array.isArray(keys)) {
      throw new InvalidOptionError('keys', `must be an array of keys, got ${typeof keys}`);
    }
    for (const key of keys) assertLockKey(key);
    if (keys.length === 0) return { marks: [] };
    const calls = planBatch(
      keys,
      this.slotFinder((key: string) => this.keysOf(key).job),
      plainCall,
      (call, key) => call.keys.push(this.keysOf(key).job),
      READ_MARKS_CALL_SIZE,
    );
    let backendTime = Number.NEGATIVE_INFINITY;
    const marks = await this.commands.call(
      'readMarks',
      (signal) =>
        runBatch<BatchCall, number | null>(
          calls,
          keys.length,
          this.sender(readMarksScript, signal),
          (call, reply, into) => {
            backendTime = Math.max(backendTime, decodeMarks(call, reply, into));
          },
        ),
      options.signal,
    );
    return { marks, backendTime };
  }

  /**
   * Reads `appendonly` and `appendfsync` with `CONFIG GET` (on every primary of a Cluster).
   * When the lock was built with `durable: true` and the server is not configured for it,
   * throws {@link InvalidOptionError} naming `durable`. Throws `BackendUnavailableError` when the
   * server cannot be asked (unreachable, or `CONFIG` disabled as on some managed services).
   */
  async verifyDurability(): Promise<DurabilityReport> {
    return verifyDurability(this.redis, this.commands, this.capabilities.durable);
  }

  /** Nothing to free: the lock holds no timers or connections of its own. */
  async close(): Promise<void> {}

  private keysOf(key: string): LockKeys {
    let keys = this.keyCache.get(key);
    if (!keys) {
      if (this.keyCache.size >= KEY_CACHE_SIZE) this.keyCache.clear();
      keys = lockKeys(this.prefix, key);
      this.keyCache.set(key, keys);
    }
    return keys;
  }

  /**
   * On a Cluster: the hash slot of an item, from one of its keys (with the client's `keyPrefix`,
   * as the server sees it). On a single node: `undefined` (slots do not matter there).
   */
  private slotFinder<T>(keyOf: (item: T) => string): ((item: T) => number) | undefined {
    if (!this.redis.isCluster) return undefined;
    const keyPrefix = this.redis.options.keyPrefix ?? '';
    return (item) => hashSlot(keyPrefix + keyOf(item));
  }

  /**
   * Sends one call of a batch with `script`, under the batch's signal; with `traces`, records
   * the connection each call was written to (for `replicaAck`).
   */
  private sender(
    script: RedisScript,
    signal: GiveUpSignal,
    traces?: Map<BatchCall, WriteTrace>,
  ): (call: BatchCall) => Promise<unknown> {
    if (!traces) return (call) => script.run(this.redis, call.keys, call.args, signal);
    return (call) => {
      const trace: WriteTrace = {};
      traces.set(call, trace);
      return script.run(this.redis, call.keys, call.args, signal, trace);
    };
  }

  /**
   * With `replicaAck`: waits for the replicas to acknowledge the won claims of one call (written
   * on `sockets`). When they do not in time, hands every one of `won` back (withdraw: the claim
   * record and the lease, so the fire is not burnt on this server) and throws the
   * `ReplicaAckError` (or the `BackendUnavailableError` of a failed `WAIT`): nothing of the
   * call may run.
   */
  private async confirmWins(
    operation: string,
    won: readonly Lease[],
    sockets: readonly (object | undefined)[],
    signal: AbortSignal | undefined,
  ): Promise<void> {
    try {
      await confirmReplicated(this.commands, this.replicaAck!, operation, sockets, signal);
    } catch (error) {
      await Promise.allSettled(won.map((lease) => this.withdraw(lease)));
      throw error;
    }
  }
}

/** The lease `extend` answers from the extend script's reply (`null`: no longer held). */
function extended(lease: Lease, reply: [string, string, string] | null): Lease | null {
  if (!reply) return null;
  return {
    ...lease,
    owner: reply[1],
    expiresAt: Number(reply[0]),
    backendTime: Number(reply[2]),
  };
}
