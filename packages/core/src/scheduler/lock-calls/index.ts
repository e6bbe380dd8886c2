/**
 * How the scheduler's calls reach the lock: claims (batched per wake where the lock has
 * `claimMany`, bounded in flight, parked until the fire time on the fleet's clock) and lease
 * renewals and releases (batched where the lock has `extendMany`). A fire asks here; it never
 * sees a batch.
 */
export { Batcher } from './batcher.js';
export type { ClaimSender } from './claim-batch.js';
export { claimSenderFor } from './claim-batch.js';
export { ClaimsAtFireTime } from './claims-at-fire-time.js';
export type { LeaseCalls } from './lease-batch.js';
export { leaseCallsFor } from './lease-batch.js';
