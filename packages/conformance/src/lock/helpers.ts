import type { ClaimRequest, Lock } from '@fleetcron/core';

/** Builds a claim request; exclusive unless told otherwise. */
export function req(
  key: string,
  fireAt: number,
  owner: string,
  leaseMs: number,
  exclusive = true,
): ClaimRequest {
  return { key, fireAt, owner, leaseMs, exclusive };
}

/** Makes `count` clients on one fixture. */
export async function clients(
  fixture: { newLock(): Promise<Lock> },
  count: number,
): Promise<Lock[]> {
  const locks: Lock[] = [];
  for (let i = 0; i < count; i++) locks.push(await fixture.newLock());
  return locks;
}
