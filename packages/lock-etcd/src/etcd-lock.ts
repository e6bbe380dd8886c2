import {
  BackendUnavailableError,
  type BatchOptions,
  type ClaimRequest,
  type ClaimResult,
  type Clock,
  InvalidOptionError,
  type Lease,
  LeaseTooShortError,
  type Lock,
  type LockCapabilities,
  type LockInspection,
  type MarkReading,
} from '@fleetcron/core';
import {
  assertBatchSize,
  assertClaimRequest,
  assertLockKey,
  DEFAULT_EARLY_TOLERANCE_MS,
} from '@fleetcron/core/backend';
import { singleAttemptClientOf } from '@fleetcron/etcd-shared';
import type { Etcd3 } from 'etcd3';
import { BatchClaimer, ETCD_MAX_BATCH } from './claim-batch.js';
import type { ClaimContext } from './claim-reads.js';
import { SingleClaimer } from './claim-single.js';
import { clocksAtArrival, type EtcdClock, etcdClockOf } from './etcd-clock.js';
import { type HeldBatchContext, releaseAll, renewAll } from './held-batch.js';
import { HeldLeases } from './held-leases.js';
import { inspectKey } from './inspect.js';
import { KeyLayout } from './keys.js';
import { JobLeasePool } from './lease-pool.js';
import { type EtcdLockOptions, type ResolvedOptions, resolveOptions } from './options.js';
import { readEtcdMarks } from './read-marks.js';
import { RecordLeases } from './record-leases.js';
import { BACKEND, createdAt, deleteOp, ETCD_MIN_LEASE_MS, EtcdRpc, getOp, kvsOf } from './rpc.js';

export { ETCD_MAX_BATCH } from './claim-batch.js';
export { ETCD_MIN_LEASE_MS } from './rpc.js';

/** Spare leases are kept alive this often, in ms (see {@link JobLeasePool}). */
const REFRESH_MS = 400;

/**
 * A fleetcron {@link Lock} on etcd v3 (through the `etcd3` client).
 *
 * A claim is one transaction: "if the fire's claim record does not exist (and, for an exclusive
 * claim, the job's lease key does not exist) then put both, else read the record and both lease
 * keys". The fencing token is the revision of that transaction — etcd's cluster-wide revision,
 * strictly increasing and persisted, so tokens increase per key across owners and restarts.
 * Lease keys expire through etcd leases (judged by the server); claim records expire through
 * bucketed etcd leases once their window has passed. Staleness is judged by the adapter's clock:
 * see the package README for the bound this relies on.
 *
 * The adapter never closes the client it is given; `close()` revokes the job leases it granted
 * and stops its keepalives.
 */
export class EtcdLock implements Lock {
  readonly backend = BACKEND;
  readonly capabilities: LockCapabilities = {
    minLeaseMs: ETCD_MIN_LEASE_MS,
    leaseGranularityMs: 1_000,
    durable: true,
    clock: 'client',
    earlyToleranceMs: DEFAULT_EARLY_TOLERANCE_MS,
    durableMark: true,
    maxBatch: ETCD_MAX_BATCH,
  };
  readonly windowMs: number;
  /** Prefix of every key this adapter reads and writes. */
  readonly prefix: string;
  private readonly clock: Clock;
  private readonly keys: KeyLayout;
  private readonly rpc: EtcdRpc;
  private readonly pool: JobLeasePool;
  private readonly records: RecordLeases;
  private readonly single: SingleClaimer;
  private readonly batch: BatchClaimer;
  private readonly heldBatch: HeldBatchContext;
  private readonly held: HeldLeases;
  /** The lock's own client (see `singleAttemptClientOf` of `@fleetcron/etcd-shared`): no retries, no circuit breaker. */
  private readonly client: Etcd3;
  /** The etcd host's clock (README, "The fleet's clock"); `null` when turned off. */
  private readonly etcdClock: EtcdClock | null;
  private closed = false;
  /** etcd's `--max-txn-ops` as declared (the most range reads one `readMarks` txn carries). */
  private readonly maxTxnOps: number;

  /**
   * @param client Your `Etcd3` client; never closed. The lock makes its calls through a client
   *   of its own built from the same options (hosts, credentials, gRPC options) but without
   *   etcd3's retry and circuit-breaker policies (see README, "After a server restart").
   */
  constructor(client: Etcd3, options: EtcdLockOptions = {}) {
    const resolved: ResolvedOptions = resolveOptions(options);
    this.windowMs = resolved.windowMs;
    this.capabilities.earlyToleranceMs = resolved.earlyToleranceMs;
    this.prefix = resolved.prefix;
    this.clock = resolved.clock;
    this.keys = new KeyLayout(resolved.prefix);
    this.maxTxnOps = resolved.maxTxnOps;
    this.client = singleAttemptClientOf(client);
    this.rpc = new EtcdRpc(this.client, resolved.requestTimeoutMs);
    this.pool = new JobLeasePool(this.rpc, {
      spares: resolved.spareLeases,
      refreshMs: REFRESH_MS,
    });
    this.held = new HeldLeases(this.rpc, this.pool, this.clock, resolved.maxTxnOps);
    this.records = new RecordLeases(
      this.rpc,
      this.clock,
      resolved.windowMs,
      resolved.skewToleranceMs,
    );
    const claims: ClaimContext = {
      ...{ rpc: this.rpc, keys: this.keys, held: this.held, pool: this.pool },
      ...{ records: this.records, windowMs: this.windowMs, maxTxnOps: resolved.maxTxnOps },
      earlyToleranceMs: resolved.earlyToleranceMs,
    };
    this.single = new SingleClaimer(claims);
    this.batch = new BatchClaimer(claims);
    this.heldBatch = {
      ...{ rpc: this.rpc, keys: this.keys, held: this.held, maxTxnOps: resolved.maxTxnOps },
      now: () => this.clock.now(),
    };
    this.etcdClock = etcdClockOf(this.client, resolved);
    // Measure from the start, so the first claim rarely waits (a claim that waits past the next
    // fire of its job would be overtaken by that fire's claim).
    void this.etcdClock?.ready();
    if (resolved.etcdClock) this.capabilities.backendTimeBoundMs = resolved.etcdClock.maxErrorMs;
  }

  /**
   * The etcd host's clock minus this lock's `clock`, ms, with its error bound; `null` before the
   * first measurement (started at construction) or when `etcdClock: false`.
   */
  etcdClockOffset(): { offsetMs: number; boundMs: number } | null {
    const etcdNow = this.etcdClock?.now() ?? null;
    const boundMs = this.etcdClock?.boundMs() ?? null;
    if (etcdNow === null || boundMs === null) return null;
    return { offsetMs: etcdNow - this.clock.now(), boundMs };
  }

  /**
   * Claims a fire (see {@link Lock.claim}). `early` is judged by the etcd host's clock as
   * measured (a claim before the first measurement waits for it, at most ~1.5 s), and every answer
   * carries that clock as `backendTime`; without a measurement, by `clock`, with no `backendTime`.
   */
  async claim(request: ClaimRequest): Promise<ClaimResult> {
    this.assertOpen('claim');
    const { now, etcdNow } = await clocksAtArrival(this.clock, this.etcdClock);
    this.assertOpen('claim');
    const result = await this.single.claim(request, now, etcdNow);
    const backendTime = this.etcdClock?.now() ?? null;
    return backendTime === null ? result : { ...result, backendTime };
  }

  /**
   * Claims many fires (see {@link Lock.claimMany}), each answered as {@link claim} would answer
   * it alone, in as few transactions as etcd allows: one per `maxTxnOps - 4` requests (124 with
   * etcd's defaults), sent concurrently, each request a nested transaction (README, "Batched
   * claims"). The keys a transaction wins share one etcd lease until their first renewal.
   */
  async claimMany(
    requests: readonly ClaimRequest[],
    options: BatchOptions = {},
  ): Promise<ClaimResult[]> {
    this.assertOpen('claimMany');
    assertBatchSize(requests, ETCD_MAX_BATCH);
    BatchClaimer.check(requests);
    for (const request of requests) assertClaimRequest(request);
    if (requests.length === 0) return [];
    if (options.signal?.aborted) {
      throw BackendUnavailableError.notSent(BACKEND, 'claimMany');
    }
    const { now, etcdNow } = await clocksAtArrival(this.clock, this.etcdClock);
    const results = await this.batch.claimAll(requests, now, etcdNow, options.signal);
    const backendTime = this.etcdClock?.now() ?? null;
    return backendTime === null ? results : results.map((r) => ({ ...r, backendTime }));
  }

  /**
   * Renews many leases (see {@link Lock.extendMany}): one keepalive message per etcd lease over
   * one stream; leases that need a move take the single path.
   */
  async extendMany(
    leases: readonly Lease[],
    leaseMs: readonly number[],
    options: BatchOptions = {},
  ): Promise<(Lease | null)[]> {
    this.assertOpen('extendMany');
    assertBatchSize(leases, ETCD_MAX_BATCH);
    if (!Array.isArray(leaseMs) || leaseMs.length !== leases.length) {
      throw new InvalidOptionError(
        'leaseMs',
        'must be an array as long as leases (one per lease).',
      );
    }
    leaseMs.forEach((ms, i) => {
      if (!(ms >= ETCD_MIN_LEASE_MS)) {
        throw new LeaseTooShortError(`leaseMs[${i}]`, ms, ETCD_MIN_LEASE_MS, BACKEND);
      }
    });
    if (leases.length === 0) return [];
    const expiries = await renewAll(this.heldBatch, leases, leaseMs, options.signal);
    const backendTime = this.etcdClock?.now() ?? null;
    return leases.map((lease, i) => {
      const expiresAt = expiries[i] ?? null;
      if (expiresAt === null) return null;
      return backendTime === null ? { ...lease, expiresAt } : { ...lease, expiresAt, backendTime };
    });
  }

  /** Ends many leases (see {@link Lock.releaseMany}): one transaction per `maxTxnOps - 2`. */
  async releaseMany(leases: readonly Lease[], options: BatchOptions = {}): Promise<boolean[]> {
    this.assertOpen('releaseMany');
    assertBatchSize(leases, ETCD_MAX_BATCH);
    if (leases.length === 0) return [];
    return releaseAll(this.heldBatch, leases, options.signal);
  }

  /**
   * Renews `lease` (see {@link Lock.extend}): a keepalive of the etcd lease that carries it (see
   * `HeldLeases`); the answer carries the etcd host's clock as `backendTime` when measured.
   */
  async extend(lease: Lease, leaseMs: number): Promise<Lease | null> {
    this.assertOpen('extend');
    if (!(leaseMs >= ETCD_MIN_LEASE_MS)) {
      throw new LeaseTooShortError('leaseMs', leaseMs, ETCD_MIN_LEASE_MS, BACKEND);
    }
    const expiresAt = await this.held.renew(lease, this.keys.slot(lease), leaseMs);
    if (expiresAt === null) return null;
    const backendTime = this.etcdClock?.now() ?? null;
    const renewed = { ...lease, expiresAt };
    return backendTime === null ? renewed : { ...renewed, backendTime };
  }

  /** Ends `lease` early (see {@link Lock.release}): deletes its key if it still holds its token. */
  async release(lease: Lease): Promise<boolean> {
    this.assertOpen('release');
    return this.held.release(lease, this.keys.slot(lease));
  }

  /**
   * Hands back a won claim that will never run, in one transaction: if the fire's claim record
   * still holds `lease.token` (its create revision), delete it, and (nested transaction) the
   * lease key too if it still holds that token. See {@link Lock.withdraw}.
   */
  async withdraw(lease: Lease): Promise<boolean> {
    this.assertOpen('withdraw');
    const claimKey = this.keys.claim(lease.key, lease.fireAt);
    const slot = this.keys.slot(lease);
    const held = this.held.get(slot, lease.token);
    const res = await this.rpc.txn(
      'withdraw',
      [createdAt(claimKey, lease.token)],
      [
        deleteOp(claimKey),
        {
          request_txn: {
            compare: [createdAt(slot, lease.token)],
            success: [getOp(slot), deleteOp(slot)],
            failure: [],
          },
        },
      ],
      [],
    );
    if (!res.succeeded) return false;
    this.held.forget(slot, lease.token);
    const inner = res.responses[1]?.response_txn;
    const leaseId = inner?.succeeded ? kvsOf(inner, 0)[0]?.lease : held?.leaseId;
    if (inner?.succeeded && leaseId) this.held.freed(leaseId, true);
    return true;
  }

  /** Reads what etcd holds for `key` (see {@link Lock.inspect}): one transaction. */
  async inspect(key: string): Promise<LockInspection> {
    assertLockKey(key);
    this.assertOpen('inspect');
    return inspectKey(this.rpc, this.keys, this.held, this.windowMs, key, () => this.clock.now());
  }

  /**
   * Reads the marks of many keys (see {@link Lock.readMarks}): one transaction of range reads
   * per `maxTxnOps` keys (128 with etcd's defaults), sent concurrently. Any number of keys;
   * every key is checked before anything is sent. `backendTime` is the etcd host's clock as
   * measured (the read waits for the first measurement, as a claim does); without one
   * (`etcdClock: false`, or it failed) it is left out.
   */
  async readMarks(keys: readonly string[], options: BatchOptions = {}): Promise<MarkReading> {
    this.assertOpen('readMarks');
    if (!Array.isArray(keys)) {
      throw new InvalidOptionError('keys', `must be an array of keys, got ${typeof keys}`);
    }
    for (const key of keys) assertLockKey(key);
    if (keys.length === 0) return { marks: [] };
    const [marks] = await Promise.all([
      readEtcdMarks(this.rpc, this.keys, keys, this.maxTxnOps, options.signal),
      this.etcdClock?.ready(),
    ]);
    const backendTime = this.etcdClock?.now() ?? null;
    return backendTime === null ? { marks } : { marks, backendTime };
  }

  /**
   * Revokes the job leases this adapter granted (ending any lease still held) and stops the
   * keepalives. Claim records stay until their window has passed. Never closes the client.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.etcdClock?.close();
    this.held.clear();
    this.records.close();
    await this.pool.close();
    this.client.close();
  }

  private assertOpen(operation: string): void {
    if (this.closed) {
      throw BackendUnavailableError.because(
        BACKEND,
        operation,
        'this EtcdLock is closed; create a new one (close() is final)',
      );
    }
  }
}
