import type { Clock } from '@fleetcron/core';
import type { EtcdRpc } from './rpc.js';

/** One etcd lease that carries the claim records of the fires of one time bucket. */
interface BucketLease {
  id: string;
  /** Wall-clock time (adapter clock) until which the lease must keep its records. */
  keepUntil: number;
}

/**
 * The etcd leases that expire claim records, so storage stays bounded without a sweeper.
 *
 * Fires are grouped in buckets of `bucketMs` by `fireAt`. The records of bucket `b` are attached
 * to one lease granted with a fixed TTL (no keepalive) that runs until
 * `(b + 1) · bucketMs + windowMs + skewToleranceMs` by this adapter's clock: every record lives at
 * least until `fireAt + windowMs + skewToleranceMs` and at most `bucketMs` (+ TTL rounding) longer.
 * An instance keeps about `2 · windowMs / bucketMs + 1` such leases alive at a time and grants one
 * per bucket; the next bucket's lease is granted in the background, off the claim path.
 *
 * These leases are never revoked by `close()`: that would delete the claim records of fires that
 * already ran, and let a late instance run them again. They expire on their own.
 */
export class RecordLeases {
  readonly bucketMs: number;
  private readonly buckets = new Map<number, Promise<BucketLease>>();
  private readonly granted = new Map<number, BucketLease>();
  private closed = false;

  constructor(
    private readonly rpc: EtcdRpc,
    private readonly clock: Clock,
    private readonly windowMs: number,
    private readonly skewToleranceMs: number,
  ) {
    this.bucketMs = Math.min(60_000, Math.max(1_000, Math.floor(windowMs / 4)));
  }

  /** The id of the lease that keeps the claim record of fire `fireAt` long enough. */
  async leaseFor(fireAt: number): Promise<string> {
    const bucket = Math.floor(fireAt / this.bucketMs);
    const lease = await this.bucketLease(bucket, 'claim');
    // Prefetch the next bucket's lease so the next claims need one round trip only.
    if (!this.buckets.has(bucket + 1))
      this.bucketLease(bucket + 1, 'lease grant').catch(() => undefined);
    return lease.id;
  }

  /** Forgets lease `id` (the server said it does not exist); the next claim grants a new one. */
  invalidate(id: string): void {
    for (const [bucket, lease] of this.granted) {
      if (lease.id !== id) continue;
      this.granted.delete(bucket);
      this.buckets.delete(bucket);
    }
  }

  /** Stops granting; the granted leases expire on their own (see the class comment). */
  close(): void {
    this.closed = true;
    this.buckets.clear();
    this.granted.clear();
  }

  private bucketLease(bucket: number, operation: string): Promise<BucketLease> {
    this.prune();
    const existing = this.buckets.get(bucket);
    if (existing) return existing;
    const keepUntil = (bucket + 1) * this.bucketMs + this.windowMs + this.skewToleranceMs;
    // The server counts the TTL from when the grant reaches it, which is after `now`.
    const ttlSec = Math.max(2, Math.ceil((keepUntil - this.clock.now()) / 1000));
    const promise = this.rpc.grant(operation, ttlSec).then((id) => {
      const lease = { id, keepUntil };
      if (this.buckets.get(bucket) === promise) this.granted.set(bucket, lease);
      return lease;
    });
    if (!this.closed) this.buckets.set(bucket, promise);
    promise.catch(() => {
      if (this.buckets.get(bucket) === promise) this.buckets.delete(bucket);
    });
    return promise;
  }

  /** Drops buckets whose leases have run out (their fires are stale by now). */
  private prune(): void {
    const horizon = this.clock.now() - this.windowMs - this.skewToleranceMs - this.bucketMs;
    for (const bucket of this.buckets.keys()) {
      if ((bucket + 1) * this.bucketMs < horizon) {
        this.buckets.delete(bucket);
        this.granted.delete(bucket);
      }
    }
  }
}
