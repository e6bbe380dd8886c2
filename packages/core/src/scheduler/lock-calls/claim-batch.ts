import type { Clock } from '../../clock.js';
import type { ClaimRequest, ClaimResult, Lock } from '../../lock.js';
import { safeCall } from '../fire/index.js';
import type { GiveUp } from '../timing/index.js';
import { Batcher, type SentItem } from './batcher.js';
import { ClaimLimiter } from './claim-limiter.js';

/** A claim handed to the lock: the monotonic time it was sent, and its answer. */
export type SentClaim = SentItem<ClaimResult>;

/**
 * How a fire's claim reaches the lock: the step of `claimFire` between building the request
 * and waiting for its answer. {@link ClaimBatcher} for locks with `claimMany`,
 * {@link SingleClaims} for the others.
 */
export interface ClaimSender {
  /**
   * Sends `request` when its turn comes (the next batch, or a free slot). Resolves once it was
   * sent, with the send time and the answer, or `null` when it was dropped unsent: `giveUp`
   * aborted first, or `wanted()` said no when its turn came (`stop()` began). Never rejects;
   * the answer rejects when the lock failed. A single claim is sent with `giveUp.signal` as
   * its `ClaimRequest.signal`. `at`: the claim leaves no earlier than this wall time (a job's
   * jitter; honoured by the sender that parks claims until their time, `ClaimsAtFireTime`).
   */
  send(
    request: ClaimRequest,
    giveUp: GiveUp,
    wanted: () => boolean,
    at?: number,
  ): Promise<SentClaim | null>;
  /** Sends the claims queued for the next batch now (the end of a timer wake); may do nothing. */
  sendQueued(): void;
}

/**
 * Single claims, at most `maxConcurrentClaims` in flight ({@link ClaimLimiter}): a claim's turn
 * is a free slot; the slot is given back when the answer comes or the claim is given up on (a
 * hung backend must not hold it: later fires fail closed too).
 */
export class SingleClaims implements ClaimSender {
  /** The slots (public for tests and metrics). */
  readonly limiter: ClaimLimiter;

  constructor(
    private readonly lock: Lock,
    maxConcurrentClaims: number,
    private readonly clock: Clock,
  ) {
    this.limiter = new ClaimLimiter(maxConcurrentClaims);
  }

  async send(
    request: ClaimRequest,
    giveUp: GiveUp,
    wanted: () => boolean,
  ): Promise<SentClaim | null> {
    const freeSlot = await this.limiter.acquire();
    if (giveUp.aborted || !wanted()) {
      freeSlot();
      return null;
    }
    request.signal = giveUp.signal;
    const sentAt = this.clock.monotonic();
    const answer = safeCall(() => this.lock.claim(request));
    answer.then(freeSlot, freeSlot);
    giveUp.addEventListener('abort', freeSlot);
    return { sentAt, answer };
  }

  /** Single claims are sent as their slot frees: nothing is queued for later. */
  sendQueued(): void {}
}

/**
 * Batched claims: every claim requested in the same macrotask (all fires due on one timer wake,
 * and the catch-up claims of many jobs at `start()`) goes out together through
 * `lock.claimMany`, in batches of at most `batchSize` = min(`capabilities.maxBatch`,
 * `claimBatchSize`) sent concurrently; each fire gets its own answer as its batch's answer
 * arrives. A claim given up before its batch leaves is not sent; a batch is aborted only when
 * all of its claims were given up.
 */
export class ClaimBatcher implements ClaimSender {
  private readonly batcher: Batcher<ClaimRequest, ClaimResult>;

  /** @param batchSize most claims per `claimMany` call. */
  constructor(
    lock: Lock & Required<Pick<Lock, 'claimMany'>>,
    readonly batchSize: number,
    clock: Clock,
  ) {
    this.batcher = new Batcher({
      ...{ size: batchSize, clock, name: 'claimMany' },
      call: (requests, options) => lock.claimMany(requests, options),
    });
  }

  send(request: ClaimRequest, giveUp: GiveUp, wanted: () => boolean): Promise<SentClaim | null> {
    return this.batcher.submit(request, giveUp, wanted);
  }

  /** Sends the claims submitted so far without waiting for the end of the macrotask. */
  sendQueued(): void {
    this.batcher.flushNow();
  }

  /** Claims waiting for the next flush (for tests and metrics). */
  get queued(): number {
    return this.batcher.queued;
  }
}

/**
 * The `maxBatch` a lock declares with a batched call, or `null` when it has none (or declares
 * no usable `maxBatch`): then the scheduler sends single calls.
 */
export function batchLimit(lock: Lock, method: 'claimMany' | 'extendMany' | 'releaseMany') {
  const maxBatch = lock.capabilities.maxBatch;
  const usable = typeof maxBatch === 'number' && Number.isInteger(maxBatch) && maxBatch > 0;
  return usable && typeof lock[method] === 'function' ? maxBatch : null;
}

/**
 * The claim step for `lock`: a {@link ClaimBatcher} (batches of min(maxBatch, claimBatchSize))
 * when it implements `claimMany` and declares `capabilities.maxBatch`, else
 * {@link SingleClaims} bounded by `maxConcurrentClaims`.
 */
export function claimSenderFor(
  lock: Lock,
  options: { claimBatchSize: number; maxConcurrentClaims: number },
  clock: Clock,
): ClaimSender {
  const maxBatch = batchLimit(lock, 'claimMany');
  if (maxBatch === null || !lock.claimMany) {
    return new SingleClaims(lock, options.maxConcurrentClaims, clock);
  }
  const withMany = lock as Lock & Required<Pick<Lock, 'claimMany'>>;
  return new ClaimBatcher(withMany, Math.min(maxBatch, options.claimBatchSize), clock);
}
