import type { Clock, Lease } from '@fleetcron/core';
import type { IKeyValue, IRequestOp, ITxnResponse } from 'etcd3';
import { FORGET_AFTER_MS, type JobLeasePool, type PooledLease } from './lease-pool.js';
import { createdAt, deleteOp, type EtcdRpc, getOp, kvsOf, parseValue, putOp } from './rpc.js';
import type { LeaseValue } from './values.js';

/** What this adapter knows about a lease it granted or replayed. */
export interface Held {
  /** etcd lease that carries the lease key. */
  leaseId: string;
  /** Latest expiry reported to the holder (adapter clock). */
  expiresAt: number;
  /**
   * The etcd lease may carry other lease keys too (granted by one batched claim): it is never
   * kept alive; the key's first renewal moves it to an etcd lease of its own.
   */
  shared: boolean;
}

/** A keepalive already sent for a lease's etcd lease (by a batched renewal). */
export interface KeptAlive {
  /** The TTL the server granted, seconds; `0`: the etcd lease is gone. */
  ttlSec: number;
  /** When the keepalive was sent (monotonic ms), and the adapter's clock then. */
  sentAt: number;
  now: number;
}

/** A renewal that must move its key to an etcd lease of its own (see `HeldLeases.moveAll`). */
export interface Move {
  lease: Lease;
  slot: Buffer;
  held: Held;
  leaseMs: number;
  /** When the renewal started (monotonic ms), and the adapter's clock then. */
  sentAt: number;
  now: number;
}

/** The book is swept of abandoned entries once it grows past this size. */
const SWEEP_SIZE = 256;

/**
 * The job leases this adapter holds (granted by its claims, or replayed to a re-sent claim), by
 * lease key and token: which etcd lease carries each one, and the expiry last reported to its
 * holder. Renewals and releases go through here, because both act on that etcd lease: a renewal
 * is a keepalive of it (or a move to another one), a release hands it back to the pool once it
 * carries no key.
 *
 * A single claim puts its key on an etcd lease of its own. A batched claim puts the keys it wins
 * in one transaction on one etcd lease (`shared`): that lease is never kept alive, so every key
 * on it expires with it unless renewed, and a key's first renewal moves it to an etcd lease of
 * its own. So an etcd lease is kept alive for at most one key, and a holder that stops renewing
 * loses its key when the server's TTL runs out, as with single claims.
 */
export class HeldLeases {
  private readonly book = new Map<string, Held>();
  /** How many entries of the book each etcd lease carries. */
  private readonly carried = new Map<string, number>();

  constructor(
    private readonly rpc: EtcdRpc,
    private readonly pool: JobLeasePool,
    private readonly clock: Clock,
    /** etcd's `--max-txn-ops` (see `EtcdLockOptions.maxTxnOps`). */
    private readonly maxTxnOps: number,
  ) {}

  /** The entry of the lease at `slot` with `token`, if this adapter knows it. */
  get(slot: Buffer, token: string | number): Held | undefined {
    return this.book.get(heldKey(slot, token));
  }

  /** Records a lease just granted on etcd lease `leaseId` (`shared`: see {@link Held.shared}). */
  granted(
    slot: Buffer,
    token: string | number,
    leaseId: string,
    expiresAt: number,
    shared = false,
  ): void {
    this.put(heldKey(slot, token), { leaseId, expiresAt, shared });
  }

  /**
   * The entry of a live lease key read from etcd (a re-sent claim gets its lease again): the
   * known one, else one made from the key (its expiry from its value, else `fallbackExpiresAt`).
   */
  ofKey(kv: IKeyValue, fallbackExpiresAt: number): Held {
    const hk = heldKey(kv.key, kv.create_revision);
    let held = this.book.get(hk);
    if (!held) {
      const value = parseValue<LeaseValue>(kv);
      held = {
        leaseId: kv.lease,
        expiresAt: value?.expiresAt ?? fallbackExpiresAt,
        shared: value?.shared === true,
      };
      this.put(hk, held);
    }
    return held;
  }

  /** Forgets the entry of the lease at `slot` with `token`; returns it. */
  forget(slot: Buffer, token: string | number): Held | undefined {
    const hk = heldKey(slot, token);
    const held = this.book.get(hk);
    if (held) this.remove(hk, held);
    return held;
  }

  /** Forgets entries whose holder neither renewed nor released them well past expiry. */
  sweep(now: number): void {
    if (this.book.size <= SWEEP_SIZE) return;
    for (const [hk, held] of this.book) {
      if (held.expiresAt + FORGET_AFTER_MS < now) this.remove(hk, held);
    }
  }

  /** Forgets every entry (the lock is closing; the pool revokes the etcd leases). */
  clear(): void {
    this.book.clear();
    this.carried.clear();
  }

  /**
   * Renews `lease` (lease key `slot`) for `leaseMs` from now (adapter clock): a keepalive of the
   * etcd lease that carries it, and a move to another etcd lease when `leaseMs` is longer than
   * that one's TTL or when it is shared. Resolves the new expiry, or `null` when the lease is no
   * longer held. `kept`: the answer of a keepalive already sent for its etcd lease (`renewAll`).
   */
  async renew(
    lease: Lease,
    slot: Buffer,
    leaseMs: number,
    kept?: KeptAlive,
  ): Promise<number | null> {
    const step = await this.keepAlive(lease, slot, leaseMs, kept);
    if (!('move' in step)) return step.expiresAt;
    return (await this.moveAll([step.move]))[0] ?? null;
  }

  /**
   * The first step of a renewal: the keepalive (unless `kept` holds its answer). Answers the new
   * expiry (`null`: no longer held), or the move the renewal still needs (see {@link moveAll}).
   */
  async keepAlive(
    lease: Lease,
    slot: Buffer,
    leaseMs: number,
    kept?: KeptAlive,
  ): Promise<{ expiresAt: number | null } | { move: Move }> {
    let held = this.get(slot, lease.token);
    if (!held) {
      // Not claimed through this adapter: find the etcd lease that carries the key.
      const res = await this.rpc.txn('extend', [createdAt(slot, lease.token)], [getOp(slot)], []);
      const kv = res.succeeded ? kvsOf(res, 0)[0] : undefined;
      if (!kv || kv.lease === '0') return { expiresAt: null };
      held = this.ofKey(kv, lease.expiresAt);
    }
    const sentAt = kept?.sentAt ?? performance.now();
    const now = kept?.now ?? this.clock.now();
    if (!held.shared) {
      const ttlSec =
        kept?.ttlSec ?? (await this.rpc.keepAlive('extend', [held.leaseId])).get(held.leaseId) ?? 0;
      if (ttlSec <= 0) {
        // The server let the lease expire (holder paused or partitioned) or it was revoked.
        this.forget(slot, lease.token);
        this.pool.forget(held.leaseId);
        return { expiresAt: null };
      }
      const pooled = this.pool.owns(held.leaseId);
      if (pooled) pooled.refreshedAt = sentAt;
      if (ttlSec * 1000 >= leaseMs) {
        held.expiresAt = now + leaseMs;
        return { expiresAt: held.expiresAt };
      }
    }
    // Longer than the TTL, or a shared etcd lease (never kept alive: its other keys would live
    // on): the key moves to an etcd lease of its own.
    return { move: { lease, slot, held, leaseMs, sentAt, now } };
  }

  /**
   * Moves lease keys to etcd leases of their own with TTLs of at least their `leaseMs` (a renewal
   * asked for more than the TTL, or the key's etcd lease is shared): one transaction per
   * `maxTxnOps - 1` keys, each a nested "if the key still holds its token, put it on the new
   * lease". Resolves each one's new expiry, or `null` when the key is no longer ours.
   */
  async moveAll(moves: readonly Move[]): Promise<(number | null)[]> {
    const acquired = await Promise.allSettled(
      moves.map((m) => this.pool.acquire(m.leaseMs, m.sentAt)),
    );
    const failed = acquired.find((a): a is PromiseRejectedResult => a.status === 'rejected');
    const nexts = acquired.map((a) => (a.status === 'fulfilled' ? a.value : undefined));
    if (failed) {
      for (const next of nexts) if (next) this.pool.giveBack(next);
      throw failed.reason;
    }
    const ops: IRequestOp[] = moves.map(({ lease, slot, leaseMs, now }, i) => {
      const value: LeaseValue = {
        owner: lease.owner,
        fireAt: lease.fireAt,
        expiresAt: now + leaseMs,
      };
      const next = nexts[i] as PooledLease;
      return {
        request_txn: {
          compare: [createdAt(slot, lease.token)],
          success: [putOp(slot, value, next.id)],
          failure: [],
        },
      };
    });
    const size = Math.max(1, this.maxTxnOps - 1);
    const starts = Array.from({ length: Math.ceil(ops.length / size) }, (_, k) => k * size);
    const sent = await Promise.allSettled(
      starts.map((start) => this.rpc.txn('extend', [], ops.slice(start, start + size), [])),
    );
    const results: (number | null)[] = [];
    let failure: unknown;
    moves.forEach((move, i) => {
      const outcome = sent[Math.floor(i / size)] as PromiseSettledResult<ITxnResponse>;
      const next = nexts[i] as PooledLease;
      const { lease, slot, held } = move;
      if (outcome.status === 'rejected') {
        // Unknown outcome: forget both leases here; the next extend re-reads which one is used.
        this.pool.forget(next.id);
        this.forget(slot, lease.token);
        failure ??= outcome.reason;
        return;
      }
      if (!outcome.value.responses[i % size]?.response_txn?.succeeded) {
        this.pool.giveBack(next);
        this.forget(slot, lease.token);
        results[i] = null;
        return;
      }
      const previous = held.leaseId;
      const wasShared = held.shared;
      const hk = heldKey(slot, lease.token);
      this.remove(hk, held);
      held.leaseId = next.id;
      held.shared = false;
      held.expiresAt = move.now + move.leaseMs;
      this.put(hk, held);
      // A shared lease of another adapter is left to expire (it may carry that adapter's keys).
      if (!wasShared || this.pool.owns(previous)) this.freed(previous, true);
      results[i] = held.expiresAt;
    });
    if (failure !== undefined) throw failure;
    return results;
  }

  /**
   * Deletes the lease key `slot` if it still holds `lease.token`, and hands its etcd lease back
   * (see {@link freed}). Resolves `true` when the key was deleted.
   */
  async release(lease: Lease, slot: Buffer): Promise<boolean> {
    const held = this.forget(slot, lease.token);
    let res: ITxnResponse;
    try {
      res = await this.rpc.txn(
        'release',
        [createdAt(slot, lease.token)],
        [getOp(slot), deleteOp(slot)],
        [],
      );
    } catch (error) {
      this.discard(held, slot, lease.token);
      throw error;
    }
    return this.released(res, held);
  }

  /**
   * What the release transaction `res` of a lease whose entry was `held` says: hands the etcd lease
   * back (see {@link freed}); `true` when the key was deleted.
   */
  released(res: ITxnResponse, held: Held | undefined): boolean {
    const leaseId = kvsOf(res, 0)[0]?.lease ?? held?.leaseId;
    if (leaseId) this.freed(leaseId, res.succeeded);
    return res.succeeded;
  }

  /**
   * The release of the lease at `slot` with `token` (entry `held`) had an unknown outcome (etcd
   * unreachable): revoke its etcd lease, which deletes the key if the delete did not run; on a
   * shared etcd lease (other keys on it), send the guarded delete again instead. Either is
   * retried in the background until etcd answers (a restart would give the key a new TTL).
   */
  discard(held: Held | undefined, slot: Buffer, token: string | number): void {
    const pooled = held && !held.shared && this.pool.owns(held.leaseId);
    if (pooled) {
      this.pool.discard(pooled);
      return;
    }
    if (!held?.shared) return;
    this.pool.retryInBackground(() =>
      this.rpc.txn('release', [createdAt(slot, token)], [deleteOp(slot)], []),
    );
  }

  /**
   * A lease key on etcd lease `leaseId` is gone (released or withdrawn). Once the lease carries
   * no key this adapter holds: reuse it when the pool granted it; else revoke it when `deleted`
   * (another adapter's lease, so that its keepalive-based extend answers `null`).
   */
  freed(leaseId: string, deleted: boolean): void {
    if (leaseId === '0' || this.carried.has(leaseId)) return;
    const pooled = this.pool.owns(leaseId);
    if (pooled) this.pool.giveBack(pooled);
    else if (deleted) this.pool.revokeInBackground(leaseId);
  }

  private put(hk: string, held: Held): void {
    const old = this.book.get(hk);
    if (old) this.remove(hk, old);
    this.book.set(hk, held);
    this.carried.set(held.leaseId, (this.carried.get(held.leaseId) ?? 0) + 1);
  }

  private remove(hk: string, held: Held): void {
    this.book.delete(hk);
    const count = (this.carried.get(held.leaseId) ?? 1) - 1;
    if (count > 0) this.carried.set(held.leaseId, count);
    else this.carried.delete(held.leaseId);
  }
}

/** Identifies a lease this adapter knows: its lease key and token. */
function heldKey(slot: Buffer, token: string | number): string {
  return `${slot.toString('latin1')}#${token}`;
}
