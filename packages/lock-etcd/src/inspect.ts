import type { ClaimedFire, Lease, LockInspection } from '@fleetcron/core';
import type { HeldLeases } from './held-leases.js';
import { fireAtOfKey, type KeyLayout } from './keys.js';
import { type EtcdRpc, getOp, getPrefixOp, kvsOf, markOf, parseValue } from './rpc.js';
import type { ClaimValue, LeaseValue } from './values.js';

/**
 * Reads what etcd holds for job `key` in one transaction of four range reads (claim records,
 * exclusive lease key, per-fire lease keys, mark); see {@link Lock.inspect}. Records past their
 * window by `now` count as collected (etcd deletes them when their bucket lease expires).
 */
export async function inspectKey(
  rpc: EtcdRpc,
  keys: KeyLayout,
  held: HeldLeases,
  windowMs: number,
  key: string,
  now: () => number,
): Promise<LockInspection> {
  const res = await rpc.txn(
    'inspect',
    [],
    [
      getPrefixOp(keys.claimPrefix(key)),
      getOp(keys.exclusive(key)),
      getPrefixOp(keys.perFirePrefix(key)),
      getOp(keys.mark(key)),
    ],
    [],
  );
  const readAt = now();
  const fires: ClaimedFire[] = [];
  for (const kv of kvsOf(res, 0)) {
    const value = parseValue<ClaimValue>(kv);
    const fireAt = fireAtOfKey(kv.key);
    if (!value || fireAt + windowMs < readAt) continue;
    const token = value.outcome === 'won' ? Number(kv.create_revision) : null;
    fires.push({ fireAt, owner: value.owner, outcome: value.outcome, token });
  }
  fires.sort((a, b) => a.fireAt - b.fireAt);
  const leases: Lease[] = [];
  for (const [kv, exclusive] of [
    ...kvsOf(res, 1).map((kv) => [kv, true] as const),
    ...kvsOf(res, 2).map((kv) => [kv, false] as const),
  ]) {
    const value = parseValue<LeaseValue>(kv);
    if (!value) continue;
    const token = Number(kv.create_revision);
    const known = held.get(kv.key, kv.create_revision);
    leases.push({
      key,
      fireAt: value.fireAt,
      owner: value.owner,
      token,
      expiresAt: known?.expiresAt ?? value.expiresAt,
      exclusive,
    });
  }
  leases.sort((a, b) => a.fireAt - b.fireAt);
  return {
    leases,
    newestFireAt: fires.at(-1)?.fireAt ?? null,
    fires,
    mark: markOf(kvsOf(res, 3)[0]),
  };
}
