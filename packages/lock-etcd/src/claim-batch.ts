import {
  BackendUnavailableError,
  type ClaimRequest,
  type ClaimResult,
  LeaseTooShortError,
} from '@fleetcron/core';
import { EtcdLeaseInvalidError, type IKeyValue, type IRequestOp, type ITxnResponse } from 'etcd3';
import {
  type Chunk,
  type Item,
  isOwnWin,
  leaseKeyReads,
  readsOf,
  readsView,
  requestOp,
} from './batch-request.js';
import { answerRecorded, type ClaimContext, replayCatchUp, usesLease } from './claim-reads.js';
import type { PooledLease } from './lease-pool.js';
import { absent, BACKEND, ETCD_MIN_LEASE_MS, kvsOf, markBefore, markOf } from './rpc.js';
import { leaseOf } from './values.js';

/** Most requests one `EtcdLock.claimMany` takes (`capabilities.maxBatch`). */
export const ETCD_MAX_BATCH = 1_000;
/** Bytes one batched transaction may take (etcd's `--max-request-bytes` default: 1.5 MiB). */
const MAX_TXN_BYTES = 1_048_576;
/** How often one request of a batch is sent again (a catch-up claim that finds no mark). */
const MAX_ATTEMPTS = 8;

/**
 * Batched claims on etcd ({@link EtcdLock.claimMany}). etcd gives one transaction ONE compare
 * set, all-or-nothing, but a transaction may hold nested transactions, each with its own compare
 * set, evaluated in order inside the one atomic revision. So each request becomes one nested
 * transaction (`requestOp`): "no record yet" records the fire, `won` or (exclusive claims whose
 * job's lease key exists) `busy`, atomically; otherwise it reads the record only. Most batches
 * are one transaction per `maxTxnOps - 4` requests (etcd counts the operations of each level, and
 * a nested transaction gets what its parent left), sent concurrently; a request is sent again
 * only when a catch-up claim finds no mark, or when two requests of one job (which write the same
 * keys) must go one after the other; a re-sent claim of a fire this owner won reads its lease
 * keys in one more (read-only) transaction.
 */
export class BatchClaimer {
  constructor(private readonly c: ClaimContext) {}

  /** Checks every request before anything is sent (the single claim's checks, per item). */
  static check(requests: readonly ClaimRequest[]): void {
    requests.forEach((request, i) => {
      if (!(request.leaseMs >= ETCD_MIN_LEASE_MS)) {
        const field = `requests[${i}].leaseMs`;
        throw new LeaseTooShortError(field, request.leaseMs, ETCD_MIN_LEASE_MS, BACKEND);
      }
    });
  }

  /**
   * Answers every request as a single claim would, `results[i]` for `requests[i]`. `now`: the
   * adapter's clock at the batch's arrival; `etcdNow`: the etcd host's then (`null` unmeasured).
   */
  async claimAll(
    requests: readonly ClaimRequest[],
    now: number,
    etcdNow: number | null,
    signal: AbortSignal | undefined,
  ): Promise<ClaimResult[]> {
    const { windowMs, earlyToleranceMs, keys } = this.c;
    const results: ClaimResult[] = new Array(requests.length);
    let pending: Item[] = [];
    const fleetNow = etcdNow ?? now;
    requests.forEach((request, index) => {
      const { key, fireAt } = request;
      const oldest = request.catchUp ? request.catchUp.since : fleetNow - windowMs;
      if (fireAt < oldest) {
        results[index] = { status: 'lost', key, fireAt, reason: 'stale' };
        return;
      }
      const markGuard = request.catchUp ? [markBefore(keys.mark(key), fireAt)] : [];
      const early = fireAt > fleetNow + earlyToleranceMs;
      pending.push({ index, request, early, markGuard, attempts: 0 });
    });
    this.c.held.sweep(now);
    const startedAt = performance.now();
    let retriedLeases = false;
    while (pending.length > 0) {
      const round = takeRound(pending);
      const sent = new Set(round);
      pending = pending.filter((item) => !sent.has(item));
      const { again, leaseInvalid } = await this.runRound(round, results, now, startedAt, signal);
      if (leaseInvalid) {
        if (retriedLeases) throw unavailable('an etcd lease of the batch kept disappearing');
        retriedLeases = true;
      }
      for (const item of again) {
        if (++item.attempts >= MAX_ATTEMPTS) {
          throw unavailable(`the keys of ${JSON.stringify(item.request.key)} kept changing`);
        }
      }
      pending = [...again, ...pending].sort((a, b) => a.index - b.index);
    }
    return results;
  }

  /**
   * One round: chunks of at most one request per job, sent concurrently, each as soon as its etcd
   * leases are there (a chunk that found spares does not wait for another one's inline grant).
   */
  private async runRound(
    round: Item[],
    results: ClaimResult[],
    now: number,
    startedAt: number,
    signal: AbortSignal | undefined,
  ): Promise<{ again: Item[]; leaseInvalid: boolean }> {
    if (signal?.aborted) throw BackendUnavailableError.notSent(BACKEND, 'claimMany');
    const groups = this.split(round, now);
    const chunks: (Chunk | undefined)[] = groups.map(() => undefined);
    const sent = await Promise.allSettled(
      groups.map(async (items, i) => {
        const chunk = await this.prepare(items, startedAt);
        if (signal?.aborted) {
          for (const lease of chunk.jobLeases.values()) this.giveBack(lease);
          throw BackendUnavailableError.notSent(BACKEND, 'claimMany');
        }
        chunks[i] = chunk;
        const ops = chunk.items.map((item, j) => requestOp(this.c, item, chunk, j, now));
        return this.c.rpc.txn('claimMany', [], ops, [], signal);
      }),
    );
    const again: Item[] = [];
    const replays: [Item, IKeyValue][] = [];
    let leaseInvalid = false;
    let failure: unknown;
    sent.forEach((outcome, i) => {
      const chunk = chunks[i];
      if (!chunk) {
        // Not sent: its leases could not be had (given back), or the caller gave up.
        failure ??= (outcome as PromiseRejectedResult).reason;
      } else if (outcome.status === 'fulfilled') {
        const answered = this.answer(chunk, outcome.value, results, now);
        again.push(...answered.again);
        replays.push(...answered.replays);
      } else if (outcome.reason instanceof EtcdLeaseInvalidError) {
        // A lease we cached expired under us (clock jump, server restored from backup): nothing
        // was applied; drop the chunk's leases and send its requests once more.
        for (const id of chunk.recordLeases) if (id) this.c.records.invalidate(id);
        for (const lease of chunk.jobLeases.values()) this.c.pool.forget(lease.id);
        again.push(...chunk.items);
        leaseInvalid = true;
      } else {
        // Unknown outcome: the leases may carry won keys. Revoke them; a replay answers `lost`.
        for (const lease of chunk.jobLeases.values()) this.c.pool.discard(lease);
        failure ??= outcome.reason;
      }
    });
    if (failure !== undefined) throw failure;
    if (replays.length > 0) await this.replay(replays, results, now);
    return { again, leaseInvalid };
  }

  /** Splits a round into transactions within `maxTxnOps` (per level) and the byte budget. */
  private split(round: Item[], now: number): Item[][] {
    const chunks: Item[][] = [];
    let current: Item[] = [];
    let deepest = 0;
    let bytes = 0;
    const sizing: Chunk = { items: [], jobLeases: new Map(), recordLeases: [] };
    // The budget a request's transaction needs depends on its shape only: measured once per shape.
    const depths = new Map<string, number>();
    for (const item of round) {
      const { request } = item;
      const shape = `${item.early}/${request.exclusive}/${item.markGuard.length}`;
      let depth = depths.get(shape);
      if (depth === undefined) {
        depth = depthOf(requestOp(this.c, item, sizing, 0, now));
        depths.set(shape, depth);
      }
      // About 20 mentions of a key no longer than the claim record's, plus values.
      // The claim record's key: prefix, `c/`, the encoded job name, `/` and 16 digits.
      const keyBytes =
        Buffer.byteLength(this.c.keys.prefix) + 19 + encodeURIComponent(request.key).length;
      const cost = { depth, bytes: 300 + 20 * (keyBytes + 40) };
      const fits =
        current.length + 1 + Math.max(deepest, cost.depth) <= this.c.maxTxnOps &&
        bytes + cost.bytes <= MAX_TXN_BYTES;
      if (!fits && current.length > 0) {
        chunks.push(current);
        current = [];
        deepest = 0;
        bytes = 0;
      }
      current.push(item);
      deepest = Math.max(deepest, cost.depth);
      bytes += cost.bytes;
    }
    if (current.length > 0) chunks.push(current);
    return chunks;
  }

  /** The etcd leases of one chunk: record leases by bucket, one job lease per TTL. */
  private async prepare(items: Item[], startedAt: number): Promise<Chunk> {
    const chunk: Chunk = { items, jobLeases: new Map(), recordLeases: [] };
    const waits: Promise<unknown>[] = [];
    const longest = new Map<number, number>();
    // Fires of one instant share their record lease: asked for once per distinct fire time.
    const records = new Map<number, number[]>();
    items.forEach((item, j) => {
      chunk.recordLeases[j] = '';
      if (item.early) return;
      const { fireAt, leaseMs } = item.request;
      const positions = records.get(fireAt);
      if (positions) positions.push(j);
      else records.set(fireAt, [j]);
      const ttl = this.c.pool.ttlFor(leaseMs);
      longest.set(ttl, Math.max(longest.get(ttl) ?? 0, leaseMs));
    });
    for (const [fireAt, positions] of records) {
      const leased = this.c.records.leaseFor(fireAt);
      waits.push(
        leased.then((id) => {
          for (const j of positions) chunk.recordLeases[j] = id;
        }),
      );
    }
    for (const [ttl, leaseMs] of longest) {
      this.c.pool.expect(leaseMs, 1); // the pool keeps spares for bursts of this size
      const acquired = this.c.pool.acquire(leaseMs, startedAt);
      waits.push(acquired.then((lease) => chunk.jobLeases.set(ttl, lease)));
    }
    const settled = await Promise.allSettled(waits);
    const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
    if (failed) {
      for (const lease of chunk.jobLeases.values()) this.giveBack(lease);
      throw failed.reason;
    }
    return chunk;
  }

  /**
   * Reads the answers of one chunk's transaction. Returns the requests to send again, and the
   * re-sent claims of fires this owner won (`replays`), whose lease keys are read next.
   */
  private answer(
    chunk: Chunk,
    res: ITxnResponse,
    results: ClaimResult[],
    now: number,
  ): { again: Item[]; replays: [Item, IKeyValue][] } {
    const again: Item[] = [];
    const replays: [Item, IKeyValue][] = [];
    const wins: [Item, PooledLease][] = [];
    /** Leases that must not go back to the pool: a key on them shows in a failed request's reads. */
    const keep = new Set<PooledLease>();
    const token = Number(res.header.revision);
    chunk.items.forEach((item, j) => {
      const r = res.responses[j]?.response_txn;
      if (!r) throw unavailable('etcd answered a batched claim without its nested response');
      const { request } = item;
      const { key, fireAt } = request;
      if (item.early && r.succeeded) {
        results[item.index] = { status: 'lost', key, fireAt, reason: 'early' };
        return;
      }
      if (r.succeeded) {
        if (request.exclusive && !r.responses[0]?.response_txn?.succeeded) {
          results[item.index] = { status: 'busy', key, fireAt };
          return;
        }
        wins.push([item, chunk.jobLeases.get(this.c.pool.ttlFor(request.leaseMs)) as PooledLease]);
        return;
      }
      const reads = request.catchUp ? r : readsOf(r);
      const record = kvsOf(reads, 0)[0];
      if (!request.catchUp && record && isOwnWin(record, request.owner)) {
        replays.push([item, record]);
        return;
      }
      if (item.early) {
        results[item.index] = answerRecorded(this.c.held, request, reads, now);
        return;
      }
      for (const lease of chunk.jobLeases.values()) if (usesLease(reads, lease.id)) keep.add(lease);
      const answered = this.answerFailed(item, reads, now);
      if (answered) results[item.index] = answered;
      else again.push(item);
    });
    const carried = new Map<PooledLease, number>();
    for (const [, lease] of wins) carried.set(lease, (carried.get(lease) ?? 0) + 1);
    for (const [item, lease] of wins) {
      const { request } = item;
      const expiresAt = now + request.leaseMs;
      const shared = (carried.get(lease) ?? 0) > 1;
      this.c.held.granted(this.c.keys.slot(request), token, lease.id, expiresAt, shared);
      results[item.index] = { status: 'won', lease: leaseOf(request, token, expiresAt) };
    }
    for (const lease of chunk.jobLeases.values()) {
      if (!carried.has(lease) && !keep.has(lease)) this.giveBack(lease);
    }
    return { again, replays };
  }

  /**
   * Answers re-sent claims of fires this owner won (rare: a batch re-sent after a lost reply):
   * reads their lease keys, one read-only transaction per `maxTxnOps / 2` claims, and answers as
   * a single claim would (the same lease while its key holds the record's token, else `lost`).
   */
  private async replay(replays: [Item, IKeyValue][], results: ClaimResult[], now: number) {
    const per = Math.max(1, Math.floor(this.c.maxTxnOps / 2));
    const groups: [Item, IKeyValue][][] = [];
    for (let i = 0; i < replays.length; i += per) groups.push(replays.slice(i, i + per));
    await Promise.all(
      groups.map(async (group) => {
        const ops = group.flatMap(([{ request }]) => leaseKeyReads(this.c.keys, request));
        // Not given the batch's signal: a read changes nothing, and the wins are already written.
        const res = await this.c.rpc.txn('claimMany', [], ops, []);
        group.forEach(([item, record], j) => {
          const reads = readsView(record, res.responses[2 * j], res.responses[2 * j + 1]);
          results[item.index] = answerRecorded(this.c.held, item.request, reads, now);
        });
      }),
    );
  }

  /**
   * The answer of a request whose condition failed (`r`: its reads, in `claimReads` order), or
   * `undefined` to send it again.
   */
  private answerFailed(item: Item, r: ITxnResponse, now: number): ClaimResult | undefined {
    const { request } = item;
    const { key, fireAt } = request;
    if (kvsOf(r, 0)[0]) return answerRecorded(this.c.held, request, r, now);
    if (request.catchUp) {
      const markKey = this.c.keys.mark(key);
      const mark = markOf(kvsOf(r, 3)[0]);
      if (mark !== null && fireAt <= mark) {
        const replay = fireAt === mark ? replayCatchUp(this.c.held, request, r, now) : undefined;
        return replay ?? { status: 'lost', key, fireAt, reason: 'behind_mark' };
      }
      // etcd cannot compare a missing key's value: without a mark, "the mark is absent".
      item.markGuard = [mark === null ? absent(markKey) : markBefore(markKey, fireAt)];
    }
    return undefined;
  }

  private giveBack(lease: PooledLease): void {
    this.c.pool.giveBack(lease);
  }
}

/** The first pending request of each job (requests of one job write the same keys). */
function takeRound(pending: Item[]): Item[] {
  const seen = new Set<string>();
  const round: Item[] = [];
  for (const item of pending) {
    if (seen.has(item.request.key)) continue;
    seen.add(item.request.key);
    round.push(item);
  }
  return round;
}

/**
 * The operations budget etcd requires of a nested transaction (`--max-txn-ops` applies to each
 * level: a transaction's largest branch or compare list, and its nested transactions get what it
 * leaves): its own count plus the largest of its children's.
 */
function depthOf(op: IRequestOp): number {
  const txn = op.request_txn;
  if (!txn) return 0;
  const children = [...(txn.success ?? []), ...(txn.failure ?? [])].map(depthOf);
  const own = Math.max(
    txn.compare?.length ?? 0,
    txn.success?.length ?? 0,
    txn.failure?.length ?? 0,
  );
  return own + Math.max(0, ...children);
}

function unavailable(message: string): BackendUnavailableError {
  return BackendUnavailableError.because(BACKEND, 'claimMany', message);
}
