import { BackendUnavailableError, type Lease } from '@fleetcron/core';
import type { IRequestOp, ITxnResponse } from 'etcd3';
import type { Held, HeldLeases, KeptAlive } from './held-leases.js';
import type { KeyLayout } from './keys.js';
import { BACKEND, createdAt, deleteOp, type EtcdRpc, getOp } from './rpc.js';

/** What batched renewals and releases work with: the lock's parts. */
export interface HeldBatchContext {
  rpc: EtcdRpc;
  keys: KeyLayout;
  held: HeldLeases;
  /** etcd's `--max-txn-ops`: operations per level of one transaction. */
  maxTxnOps: number;
  now(): number;
}

/**
 * Renews many leases (`EtcdLock.extendMany`): ONE keepalive stream message per etcd lease, for
 * every lease this adapter holds on an etcd lease of its own; `results[i]` is what
 * `extend(leases[i], leaseMs[i])` answers (the new expiry, or `null`). Leases unknown to this
 * adapter take the single path's lookup; keys that must move to an etcd lease of their own (on a
 * shared etcd lease, or asked for longer than their TTL) move together (`HeldLeases.moveAll`).
 */
export async function renewAll(
  c: HeldBatchContext,
  leases: readonly Lease[],
  leaseMs: readonly number[],
  signal: AbortSignal | undefined,
): Promise<(number | null)[]> {
  assertNotAborted('extendMany', signal);
  const slots = leases.map((lease) => c.keys.slot(lease));
  const entries = leases.map((lease, i) => c.held.get(slots[i] as Buffer, lease.token));
  const simple = [...new Set(entries.filter((e) => e && !e.shared).map((e) => e?.leaseId))];
  let kept: Map<string, number> = new Map();
  const sentAt = performance.now();
  const now = c.now();
  if (simple.length > 0) kept = await c.rpc.keepAlive('extendMany', simple as string[]);
  const steps = await Promise.all(
    leases.map((lease, i) => {
      const entry = entries[i];
      const ttlSec = entry && !entry.shared ? kept.get(entry.leaseId) : undefined;
      const answer: KeptAlive | undefined =
        ttlSec === undefined ? undefined : { ttlSec, sentAt, now };
      return c.held.keepAlive(lease, slots[i] as Buffer, leaseMs[i] as number, answer);
    }),
  );
  // The keys that must move (first renewal after a batched claim, or a longer lease) move together.
  const moves = steps.flatMap((step) => ('move' in step ? [step.move] : []));
  const moved = await c.held.moveAll(moves);
  return steps.map((step) =>
    'move' in step ? (moved[moves.indexOf(step.move)] ?? null) : step.expiresAt,
  );
}

/**
 * Releases many leases (`EtcdLock.releaseMany`) in one transaction per `maxTxnOps - 2` leases
 * (sent concurrently): a nested transaction per lease, "if the key still holds its token, read
 * and delete it", so each answers as `release(leases[i])` would, in order.
 */
export async function releaseAll(
  c: HeldBatchContext,
  leases: readonly Lease[],
  signal: AbortSignal | undefined,
): Promise<boolean[]> {
  assertNotAborted('releaseMany', signal);
  const slots = leases.map((lease) => c.keys.slot(lease));
  const entries: (Held | undefined)[] = leases.map((lease, i) =>
    c.held.forget(slots[i] as Buffer, lease.token),
  );
  const ops: IRequestOp[] = leases.map((lease, i) => {
    const slot = slots[i] as Buffer;
    return {
      request_txn: {
        compare: [createdAt(slot, lease.token)],
        success: [getOp(slot), deleteOp(slot)],
        failure: [],
      },
    };
  });
  // A nested release needs a budget of 2 (its two operations) below the outer level.
  const size = Math.max(1, c.maxTxnOps - 2);
  const starts = Array.from({ length: Math.ceil(ops.length / size) }, (_, k) => k * size);
  const sent = await Promise.allSettled(
    starts.map((start) => c.rpc.txn('releaseMany', [], ops.slice(start, start + size), [], signal)),
  );
  const results: boolean[] = [];
  let failure: unknown;
  sent.forEach((outcome, k) => {
    const start = starts[k] as number;
    const count = Math.min(size, ops.length - start);
    for (let j = 0; j < count; j++) {
      const entry = entries[start + j];
      if (outcome.status === 'rejected') {
        // Unknown outcome: revoke the etcd lease (unless shared), as a single release does.
        c.held.discard(entry, slots[start + j] as Buffer, (leases[start + j] as Lease).token);
        failure ??= outcome.reason;
        continue;
      }
      const res = outcome.value.responses[j]?.response_txn as ITxnResponse | undefined;
      results[start + j] = res ? c.held.released(res, entry) : false;
    }
  });
  if (failure !== undefined) throw failure;
  return results;
}

function assertNotAborted(operation: string, signal: AbortSignal | undefined): void {
  if (signal?.aborted) {
    throw BackendUnavailableError.notSent(BACKEND, operation);
  }
}
