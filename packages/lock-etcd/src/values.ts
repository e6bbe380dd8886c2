import type { ClaimRequest, Lease } from '@fleetcron/core';

/** Value of a claim record (`c/` key). The token is the record's create revision. */
export interface ClaimValue {
  owner: string;
  outcome: 'won' | 'busy';
}

/** Value of a lease key (`x/` or `f/`). The token is the key's create revision. */
export interface LeaseValue {
  owner: string;
  fireAt: number;
  /** Expiry reported at claim time (adapter clock); informational. */
  expiresAt: number;
  /**
   * Set when the key was written by a batched claim on an etcd lease that carries other keys
   * too: its first renewal moves it to an etcd lease of its own (see `HeldLeases`).
   */
  shared?: true;
}

/** The lease object handed to the scheduler. */
export function leaseOf(request: ClaimRequest, token: number, expiresAt: number): Lease {
  const { key, fireAt, owner, exclusive } = request;
  return { key, fireAt, owner, token, expiresAt, exclusive };
}
