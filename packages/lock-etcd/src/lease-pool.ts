import type { EtcdRpc } from './rpc.js';

/** An etcd lease this adapter granted for job leases. */
export interface PooledLease {
  /** etcd lease id (int64 as a decimal string). */
  readonly id: string;
  /** The TTL it was granted with, in whole seconds (keepalives renew it to this). */
  readonly ttlSec: number;
  /**
   * Monotonic time (`performance.now()`) at which the last grant or keepalive that the server
   * acknowledged was SENT. The server keeps the lease at least until `refreshedAt + ttlSec`.
   */
  refreshedAt: number;
}

/** Options of {@link JobLeasePool}. */
export interface JobLeasePoolOptions {
  /** Spare leases kept granted and alive per TTL, ready for the next claim. 0: grant per claim. */
  spares: number;
  /** How often spare leases are kept alive, in ms. */
  refreshMs: number;
}

/** Seconds added to the TTL of pooled leases so a spare stays usable between two refreshes. */
export const SPARE_MARGIN_SEC = 1;
/** Slack kept between the server's lease expiry and the one the holder relies on, in ms. */
const SAFETY_MS = 100;
/**
 * Leases not renewed nor released for this long past their expiry are forgotten: by the pool
 * (`sweep`) and by `HeldLeases` (its held-lease entries).
 */
export const FORGET_AFTER_MS = 60_000;
/**
 * How long a background revoke (or release) that failed is retried, ms. A restarted etcd gives
 * every lease its full TTL again, so a revoke lost to the outage would leave its keys for one more
 * TTL after the restart: the retry removes them as soon as the server answers.
 */
const RETRY_FOR_MS = 60_000;
/** Longest pause between two tries of a background call, ms. */
const RETRY_PAUSE_MS = 1_000;
/** etcd's smallest lease TTL. */
const MIN_TTL_SEC = 2;
/** Most spares the pool keeps per TTL for bursts (see {@link JobLeasePool.expect}). */
const MAX_BURST_SPARES = 32;
/** A burst's demand is remembered this long, ms: an hourly burst finds the spares of the last. */
const BURST_MEMORY_MS = 65 * 60_000;
/** Batches that take leases within this span of each other count as one burst, ms. */
const BURST_SPAN_MS = 200;

/**
 * The etcd leases that carry job leases (the exclusive `x/` key or a per-fire `f/` key).
 *
 * A kept-alive etcd lease holds exactly one job-lease key (the keys of one batched claim share
 * a lease that is never kept alive until each moves to its own: `HeldLeases`), so `extend` is a
 * keepalive of that lease and nothing else, and a holder that stops extending (crash, pause,
 * partition) loses its key when the server's TTL runs out — the server's monotonic clock, not
 * anyone's wall clock.
 *
 * Granting a lease costs a round trip, so the pool keeps `spares` leases per TTL granted and kept
 * alive (one keepalive stream message per spare every `refreshMs`): a claim picks a spare and
 * needs a single transaction. A spare is only handed out while the server is sure to keep it at
 * least `leaseMs` past the claim (`refreshedAt + ttl >= claim start + leaseMs`); pooled leases
 * therefore get `SPARE_MARGIN_SEC` extra seconds of TTL, which is how much longer than `leaseMs`
 * a dead holder's lease may survive. Without a fresh spare (cold start, burst, slow timers) the
 * claim grants one inline (two round trips). Released leases carry no key and go back to the pool.
 */
export class JobLeasePool {
  private readonly free = new Map<number, PooledLease[]>();
  private readonly owned = new Map<string, PooledLease>();
  private readonly toppingUp = new Set<number>();
  /** The most leases of one TTL that batches took in one burst lately, and when (monotonic ms). */
  private readonly bursts = new Map<number, { count: number; at: number }>();
  /** The leases of one TTL batches are taking in the current burst, since `start`. */
  private readonly current = new Map<number, { count: number; start: number }>();
  private readonly background = new Set<Promise<unknown>>();
  private timer: ReturnType<typeof setInterval> | undefined;
  private refreshing = false;
  private closed = false;
  /** Aborted by `close()`: ends the pauses of background retries. */
  private readonly closing = new AbortController();

  constructor(
    private readonly rpc: EtcdRpc,
    private readonly options: JobLeasePoolOptions,
  ) {}

  /** The TTL (whole seconds) of the etcd lease that carries a job lease of `leaseMs`. */
  ttlFor(leaseMs: number): number {
    const base = Math.ceil(leaseMs / 1000) + (this.options.spares > 0 ? SPARE_MARGIN_SEC : 0);
    return Math.max(MIN_TTL_SEC, base);
  }

  /**
   * A lease the server keeps at least `leaseMs` past `startedAt` (monotonic ms): a fresh spare,
   * else a new grant. Hand it back with {@link giveBack} if the claim does not use it.
   */
  async acquire(leaseMs: number, startedAt: number): Promise<PooledLease> {
    const ttlSec = this.ttlFor(leaseMs);
    const list = this.free.get(ttlSec) ?? [];
    const index = list.findIndex(
      (l) => l.refreshedAt + ttlSec * 1000 >= startedAt + leaseMs + SAFETY_MS,
    );
    let lease: PooledLease;
    if (index >= 0) {
      lease = list.splice(index, 1)[0] as PooledLease;
    } else {
      lease = await this.grant(ttlSec, 'claim');
    }
    this.topUp(ttlSec);
    return lease;
  }

  /**
   * Says that one batched call is about to take `count` leases for `leaseMs` (one per
   * transaction). Batches within {@link BURST_SPAN_MS} of each other add up to one burst; for
   * {@link BURST_MEMORY_MS} after it the pool keeps as many spares of that TTL as the burst took
   * (at most {@link MAX_BURST_SPARES}; none with `spares: 0`), so the next burst of that size
   * finds its leases granted instead of granting them inline: one more round trip, queued behind
   * the other instances' transactions. Costs one keepalive message per spare every refresh.
   */
  expect(leaseMs: number, count: number): void {
    if (this.options.spares === 0) return;
    const ttlSec = this.ttlFor(leaseMs);
    const now = performance.now();
    let burst = this.current.get(ttlSec);
    if (!burst || burst.start + BURST_SPAN_MS < now) {
      burst = { count: 0, start: now };
      this.current.set(ttlSec, burst);
    }
    burst.count += count;
    const last = this.bursts.get(ttlSec);
    if (!last || last.at + BURST_MEMORY_MS < now || last.count <= burst.count) {
      this.bursts.set(ttlSec, { count: Math.min(MAX_BURST_SPARES, burst.count), at: now });
    }
  }

  /** How many spares of `ttlSec` the pool keeps: `spares`, or the recent burst's demand. */
  private target(ttlSec: number): number {
    const burst = this.bursts.get(ttlSec);
    if (!burst || burst.at + BURST_MEMORY_MS < performance.now()) return this.options.spares;
    return Math.max(this.options.spares, burst.count);
  }

  /** Whether this pool granted lease `id` (and has not revoked it). */
  owns(id: string): PooledLease | undefined {
    return this.owned.get(id);
  }

  /**
   * Returns a lease that carries no key (claim lost, or its key was deleted) to the spares, or
   * revokes it when the pool is full.
   */
  giveBack(lease: PooledLease): void {
    if (this.closed || !this.owned.has(lease.id)) return;
    const list = this.free.get(lease.ttlSec) ?? [];
    if (list.some((spare) => spare.id === lease.id)) return; // given back twice (concurrent releases)
    if (list.length >= this.target(lease.ttlSec) * 2) {
      this.discard(lease);
      return;
    }
    list.push(lease);
    this.free.set(lease.ttlSec, list);
  }

  /** Revokes a lease in the background (its key, if any, is deleted). Never throws. */
  discard(lease: PooledLease): void {
    this.owned.delete(lease.id);
    this.revokeInBackground(lease.id);
  }

  /** Revokes a lease this pool does not own (best effort, in the background, retried). */
  revokeInBackground(id: string): void {
    this.retryInBackground(() => this.rpc.revoke('lease revoke', id));
  }

  /**
   * Runs `call` in the background until it succeeds: tried again after 0.1 s, doubling up to 1 s,
   * for up to a minute (etcd unreachable, restarting), or until `close()`. Never throws.
   */
  retryInBackground(call: () => Promise<unknown>): void {
    const run = async () => {
      const deadline = performance.now() + RETRY_FOR_MS;
      for (let pause = 100; ; pause = Math.min(pause * 2, RETRY_PAUSE_MS)) {
        try {
          await call();
          return;
        } catch (error) {
          if (this.closed || performance.now() + pause > deadline) throw error;
          await this.pause(pause);
        }
      }
    };
    this.track(run());
  }

  /** Forgets a lease the server no longer has. */
  forget(id: string): void {
    this.owned.delete(id);
    for (const list of this.free.values()) {
      const index = list.findIndex((l) => l.id === id);
      if (index >= 0) list.splice(index, 1);
    }
  }

  /** Stops the keepalives and revokes every lease this pool granted (held ones included). */
  async close(): Promise<void> {
    this.closed = true;
    this.closing.abort();
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    const ids = [...this.owned.keys()];
    this.owned.clear();
    this.free.clear();
    await Promise.allSettled([
      ...ids.map((id) => this.rpc.revoke('close', id)),
      ...this.background,
    ]);
  }

  private async grant(ttlSec: number, operation: string): Promise<PooledLease> {
    const sentAt = performance.now();
    const id = await this.rpc.grant(operation, ttlSec);
    const lease: PooledLease = { id, ttlSec, refreshedAt: sentAt };
    if (this.closed) {
      this.revokeInBackground(id);
      return lease;
    }
    this.owned.set(id, lease);
    this.startTimer();
    return lease;
  }

  /** Grants spares in the background until {@link target} are free for `ttlSec`. */
  private topUp(ttlSec: number): void {
    if (this.closed || this.toppingUp.has(ttlSec)) return;
    if ((this.free.get(ttlSec)?.length ?? 0) >= this.target(ttlSec)) return;
    this.toppingUp.add(ttlSec);
    const run = async () => {
      try {
        while (!this.closed && (this.free.get(ttlSec)?.length ?? 0) < this.target(ttlSec)) {
          const lease = await this.grant(ttlSec, 'lease grant');
          this.giveBack(lease);
        }
      } finally {
        this.toppingUp.delete(ttlSec);
      }
    };
    this.track(run());
  }

  private startTimer(): void {
    if (this.timer || this.options.spares === 0) return;
    this.timer = setInterval(() => this.track(this.refresh()), this.options.refreshMs);
    this.timer.unref?.();
  }

  /** Keeps every spare alive; drops those the server no longer has. */
  private async refresh(): Promise<void> {
    if (this.refreshing || this.closed) return;
    this.refreshing = true;
    try {
      this.sweep();
      const spares = [...this.free.values()].flat();
      if (spares.length === 0) return;
      const sentAt = performance.now();
      const ttls = await this.rpc.keepAlive('lease keepalive', [
        ...new Set(spares.map((l) => l.id)),
      ]);
      for (const lease of spares) {
        const ttl = ttls.get(lease.id) ?? 0;
        if (ttl > 0) lease.refreshedAt = sentAt;
        else this.forget(lease.id);
      }
    } finally {
      this.refreshing = false;
    }
  }

  /**
   * Forgets held leases that nobody renewed for well past their TTL (a holder that gave up
   * without releasing): the server has expired them, so there is nothing left to revoke.
   */
  private sweep(): void {
    const spare = new Set([...this.free.values()].flat());
    const now = performance.now();
    for (const [id, lease] of this.owned) {
      if (!spare.has(lease) && lease.refreshedAt + lease.ttlSec * 1000 + FORGET_AFTER_MS < now) {
        this.owned.delete(id);
      }
    }
  }

  /** Waits `ms`, or until `close()`. */
  private pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(done, ms);
      timer.unref?.();
      this.closing.signal.addEventListener('abort', done, { once: true });
    });
  }

  /** Keeps a background promise until it settles; its failure is swallowed (best effort). */
  private track(promise: Promise<unknown>): void {
    const settled = promise.catch(() => undefined);
    this.background.add(settled);
    void settled.finally(() => this.background.delete(settled));
  }
}
