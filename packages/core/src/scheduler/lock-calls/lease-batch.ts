import type { Clock } from '../../clock.js';
import type { Lease, Lock } from '../../lock.js';
import { safeCall } from '../fire/index.js';
import { Batcher } from './batcher.js';
import { batchLimit } from './claim-batch.js';

/**
 * How a held lease is renewed and released: the lock's `extend`/`release`, or, for a lock with
 * `extendMany`/`releaseMany`, a batcher that sends the renewals (releases) falling due in the
 * same macrotask together — the renewals of fires won in one batch fall due on one timer wake,
 * and jobs that end together release together. Each call answers what the single call would.
 */
export interface LeaseCalls {
  /** What `lock.extend(lease, leaseMs)` answers. Rejects when the lock failed. */
  extend(lease: Lease, leaseMs: number): Promise<Lease | null>;
  /** What `lock.release(lease)` answers. Rejects when the lock failed. */
  release(lease: Lease): Promise<boolean>;
  /**
   * Sends the renewals and releases queued for the next batch now (the end of a timer wake,
   * before that wake's claims: a release queued earlier still leaves before a later claim).
   */
  sendQueued(): void;
}

/**
 * The {@link LeaseCalls} for `lock`: batches of at most min(`capabilities.maxBatch`,
 * `batchSize`) where the lock has the batched call, single calls otherwise (each method on its
 * own: a lock may batch renewals but not releases).
 *
 * A renewal's deadline still counts from the time the keeper asked for it, which is at most one
 * macrotask before its batch leaves: earlier than the real send, so never later than safe.
 */
export function leaseCallsFor(lock: Lock, batchSize: number, clock: Clock): LeaseCalls {
  const extendMax = batchLimit(lock, 'extendMany');
  const releaseMax = batchLimit(lock, 'releaseMany');
  const extends_ =
    extendMax === null
      ? null
      : new Batcher<readonly [Lease, number], Lease | null>({
          ...{ size: Math.min(extendMax, batchSize), clock, name: 'extendMany' },
          call: (items, options) =>
            callMany(lock, 'extendMany', () =>
              lock.extendMany?.(
                items.map(([lease]) => lease),
                items.map(([, ms]) => ms),
                options,
              ),
            ),
        });
  const releases =
    releaseMax === null
      ? null
      : new Batcher<Lease, boolean>({
          ...{ size: Math.min(releaseMax, batchSize), clock, name: 'releaseMany' },
          call: (leases, options) =>
            callMany(lock, 'releaseMany', () => lock.releaseMany?.(leases, options)),
        });
  return {
    extend: (lease, leaseMs) =>
      extends_ ? answerOf(extends_.submit([lease, leaseMs])) : lock.extend(lease, leaseMs),
    release: (lease) => (releases ? answerOf(releases.submit(lease)) : lock.release(lease)),
    sendQueued: () => {
      releases?.flushNow();
      extends_?.flushNow();
    },
  };
}

/** Calls a batched method that `batchLimit` found, as a promise. */
function callMany<T>(lock: Lock, name: string, call: () => Promise<T> | undefined): Promise<T> {
  return safeCall(() => {
    const result = call();
    if (result === undefined) throw new Error(`lock ${lock.backend} has no ${name}`);
    return result;
  });
}

/** The answer of an item that is always sent (no signal, always wanted). */
async function answerOf<T>(sent: Promise<{ readonly answer: Promise<T> } | null>): Promise<T> {
  const item = await sent;
  if (item === null) throw new Error('a lease call was dropped unsent');
  return item.answer;
}
