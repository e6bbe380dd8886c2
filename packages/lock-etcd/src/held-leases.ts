import type { Clock, Lease } from '@fleetcron/core';
import type { IKeyValue, ITxnResponse } from 'etcd3';
import { FORGET_AFTER_MS, type JobLeasePool } from './lease-pool.js';
import { createdAt, deleteOp, type EtcdRpc, getOp, kvsOf, parseValue, putOp } from './rpc.js';
import type { LeaseValue } from './values.js';

/** What this adapter knows about a lease it granted or replayed. */
export interface Held {
  /** etcd lease that carries the lease key. */
  leaseId: string;
  /** Latest expiry reported to the holder (adapter clock). */
  expiresAt: number;
}

/** The book is swept of abandoned entries once it grows past this size. */
const SWEEP_SIZE = 256;

/**
 * The job leases this adapter holds (granted by its claims, or replayed to a re-sent claim), by
 * lease key and token: which etcd lease carries each one, and the expiry last reported to its
 * holder. Renewals and releases go through here, because both act on that etcd lease: a renewal
 * is a keepalive of it (or a move to a longer one), a release hands it back to the pool.
 */
export class HeldLeases {
  private readonly book = new Map<string, Held>();

  constructor(
    private readonly rpc: EtcdRpc,
    private readonly pool: JobLeasePool,
    private readonly clock: Clock,
  ) {}

  /** The entry of the lease at `slot` with `token`, if this adapter knows it. */
  get(slot: Buffer, token: string | number): Held | undefined {
    return this.book.get(heldKey(slot, token));
  }

  /** Records a lease just granted on etcd lease `leaseId`. */
  granted(slot: Buffer, token: string | number, leaseId: string, expiresAt: number): void {
    this.book.set(heldKey(slot, token), { leaseId, expiresAt });
  }

  /**
   * The entry of a live lease key read from etcd (a re-sent claim gets its lease again): the
   * known one, else one made from the key (its expiry from its value, else `fallbackExpiresAt`).
   */
  ofKey(kv: IKeyValue, fallbackExpiresAt: number): Held {
    const hk = heldKey(kv.key, kv.create_revision);
    let held = this.book.get(hk);
    if (!held) {
      held = {
        leaseId: kv.lease,
        expiresAt: parseValue<LeaseValue>(kv)?.expiresAt ?? fallbackExpiresAt,
      };
      this.book.set(hk, held);
    }
    return held;
  }

  /** Forgets the entry of the lease at `slot` with `token`; returns it. */
  forget(slot: Buffer, token: string | number): Held | undefined {
    const hk = heldKey(slot, token);
    const held = this.book.get(hk);
    this.book.delete(hk);
    return held;
  }

  /** Forgets entries whose holder neither renewed nor released them well past expiry. */
  sweep(now: number): void {
    if (this.book.size <= SWEEP_SIZE) return;
    for (const [hk, held] of this.book) {
      if (held.expiresAt + FORGET_AFTER_MS < now) this.book.delete(hk);
    }
  }

  /** Forgets every entry (the lock is closing; the pool revokes the etcd leases). */
  clear(): void {
    this.book.clear();
  }

  /**
   * Renews `lease` (lease key `slot`) for `leaseMs` from now (adapter clock): a keepalive of the
   * etcd lease that carries it, and a move to a longer etcd lease when `leaseMs` is longer than
   * that one's TTL. Resolves the new expiry, or `null` when the lease is no longer held.
   */
  async renew(lease: Lease, slot: Buffer, leaseMs: number): Promise<number | null> {
    let held = this.get(slot, lease.token);
    if (!held) {
      // Not claimed through this adapter: find the etcd lease that carries the key.
      const res = await this.rpc.txn('extend', [createdAt(slot, lease.token)], [getOp(slot)], []);
      const kv = res.succeeded ? kvsOf(res, 0)[0] : undefined;
      if (!kv || kv.lease === '0') return null;
      held = { leaseId: kv.lease, expiresAt: lease.expiresAt };
      this.book.set(heldKey(slot, lease.token), held);
    }
    const sentAt = performance.now();
    const now = this.clock.now();
    const ttlSec = (await this.rpc.keepAlive('extend', [held.leaseId])).get(held.leaseId) ?? 0;
    if (ttlSec <= 0) {
      // The server let the lease expire (holder paused or partitioned) or it was revoked.
      this.forget(slot, lease.token);
      this.pool.forget(held.leaseId);
      return null;
    }
    const pooled = this.pool.owns(held.leaseId);
    if (pooled) pooled.refreshedAt = sentAt;
    if (
      ttlSec * 1000 < leaseMs &&
      !(await this.reattach(lease, slot, held, leaseMs, sentAt, now))
    ) {
      this.forget(slot, lease.token);
      return null;
    }
    held.expiresAt = now + leaseMs;
    return held.expiresAt;
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
      // Unknown outcome: revoke the etcd lease, which deletes the key if the delete did not run.
      const pooled = held && this.pool.owns(held.leaseId);
      if (pooled) this.pool.discard(pooled);
      throw error;
    }
    const leaseId = kvsOf(res, 0)[0]?.lease ?? held?.leaseId;
    if (leaseId) this.freed(leaseId, res.succeeded);
    return res.succeeded;
  }

  /**
   * The etcd lease `leaseId` carries no key any more (its key was released or withdrawn): reuse
   * it when the pool granted it; else revoke it when `deleted` (another adapter's lease, so that
   * its keepalive-based extend answers `null`).
   */
  freed(leaseId: string, deleted: boolean): void {
    if (leaseId === '0') return;
    const pooled = this.pool.owns(leaseId);
    if (pooled) this.pool.giveBack(pooled);
    else if (deleted) this.pool.revokeInBackground(leaseId);
  }

  /**
   * Moves a lease key to an etcd lease with a longer TTL (extend asked for more than the TTL the
   * key's lease was granted with). Resolves `false` when the key is no longer ours.
   */
  private async reattach(
    lease: Lease,
    slot: Buffer,
    held: Held,
    leaseMs: number,
    sentAt: number,
    now: number,
  ): Promise<boolean> {
    const next = await this.pool.acquire(leaseMs, sentAt);
    const value: LeaseValue = {
      owner: lease.owner,
      fireAt: lease.fireAt,
      expiresAt: now + leaseMs,
    };
    let res: ITxnResponse;
    try {
      res = await this.rpc.txn(
        'extend',
        [createdAt(slot, lease.token)],
        [putOp(slot, value, next.id)],
        [],
      );
    } catch (error) {
      // Unknown outcome: forget both leases here; the next extend re-reads which one is used.
      this.pool.forget(next.id);
      this.forget(slot, lease.token);
      throw error;
    }
    if (!res.succeeded) {
      this.pool.giveBack(next);
      return false;
    }
    this.freed(held.leaseId, true);
    held.leaseId = next.id;
    return true;
  }
}

/** Identifies a lease this adapter knows: its lease key and token. */
function heldKey(slot: Buffer, token: string | number): string {
  return `${slot.toString('latin1')}#${token}`;
}
