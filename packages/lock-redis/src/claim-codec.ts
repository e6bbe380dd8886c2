import {
  type ClaimedFire,
  type ClaimRequest,
  type ClaimResult,
  InvalidOptionError,
  type Lease,
  type LostReason,
} from '@fleetcron/core';
import { assertClaimRequest, assertPositiveMs } from '@fleetcron/core/backend';
import type { LockKeys } from './keys.js';

/**
 * Checks one claim request before it is sent (fireAt an integer, catch-up part, lease length)
 * and answers its lease length in whole ms. Throws `InvalidOptionError` naming the field.
 */
export function checkClaim(request: ClaimRequest): number {
  assertFireAt(request.fireAt);
  assertClaimRequest(request);
  const leaseMs = Math.ceil(request.leaseMs);
  assertPositiveMs('leaseMs', leaseMs);
  return leaseMs;
}

/** Appends the claim script's 3 KEYS of one request to `keys` (see scripts.ts, `CLAIM`). */
export function pushClaimKeys(keys: string[], lockKeys: LockKeys, fireAt: number): void {
  keys.push(lockKeys.fire + fireAt, lockKeys.fires, lockKeys.job);
}

/** Appends the claim script's per-request ARGV (fireAt, owner, lease, since) of one request to `args`. */
export function pushClaimArgs(args: string[], request: ClaimRequest, leaseMs: number): void {
  args.push(
    String(request.fireAt),
    request.owner,
    request.exclusive ? `x${leaseMs}` : String(leaseMs),
    request.catchUp ? String(request.catchUp.since) : '',
  );
}

/** Turns one reply of the claim script (`W|token|expiresAt|x|now`, `B|now`, `L|reason|now`) into the {@link ClaimResult} of `request`. */
export function decodeClaimReply(request: ClaimRequest, reply: string): ClaimResult {
  const { key, fireAt, owner } = request;
  const parts = reply.split('|');
  switch (parts[0]) {
    case 'W':
      return {
        status: 'won',
        lease: {
          key,
          fireAt,
          owner,
          token: Number(parts[1]),
          expiresAt: Number(parts[2]),
          exclusive: parts[3] === '1',
        },
        backendTime: Number(parts[4]),
      };
    case 'B':
      return { status: 'busy', key, fireAt, backendTime: Number(parts[1]) };
    case 'L':
      return {
        status: 'lost',
        key,
        fireAt,
        reason: parts[1] as LostReason,
        backendTime: Number(parts[2]),
      };
    default:
      throw new Error(`unexpected claim reply ${JSON.stringify(reply)}`);
  }
}

/** The lease hash field of a lease: `x` for the exclusive lease, else its fire time. */
export const leaseSlotOf = (lease: Pick<Lease, 'exclusive' | 'fireAt'>): string =>
  lease.exclusive ? 'x' : String(lease.fireAt);

/** Parses one claim record as the inspect script returns it: `fireAt|outcome|token|owner`. */
export function parseRecord(member: string): ClaimedFire {
  const match = /^(-?\d+)\|([wb])\|(\d*)\|([\s\S]*)$/.exec(member);
  if (!match) throw new Error(`unexpected claim record ${JSON.stringify(member)}`);
  return {
    fireAt: Number(match[1]),
    outcome: match[2] === 'w' ? 'won' : 'busy',
    token: match[3] ? Number(match[3]) : null,
    owner: match[4] ?? '',
  };
}

/** Parses one lease hash value, `token|expiresAt|fireAt|owner`, into the lease of `key`. */
export function parseLease(key: string, exclusive: boolean, value: string): Lease {
  const match = /^(\d+)\|(-?\d+)\|(-?\d+)\|([\s\S]*)$/.exec(value);
  if (!match) throw new Error(`unexpected lease ${JSON.stringify(value)}`);
  return {
    key,
    fireAt: Number(match[3]),
    owner: match[4] ?? '',
    token: Number(match[1]),
    expiresAt: Number(match[2]),
    exclusive,
  };
}

function assertFireAt(fireAt: unknown): asserts fireAt is number {
  if (!Number.isSafeInteger(fireAt)) {
    throw new InvalidOptionError(
      'fireAt',
      `must be an integer epoch ms (a safe integer), got ${String(fireAt)}.`,
    );
  }
}
