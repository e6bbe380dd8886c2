/**
 * Jobs: a definition checked and normalised (name, lease, policies, shards), the registered jobs
 * and their next fires on the timer queue, and the late-fire plan that decides which fire is
 * claimed when a wake comes late.
 */
export type { JobDefinition, NormalizedJob, OverlapPolicy } from './job.js';
export { normalizeLeaseMs, validateJob, validateMiddleware } from './job.js';
export { exclusionOf, includedFires, jobZone } from './job-exclusions.js';
export { checkJitter, jitterOffset, MAX_JITTER_MS } from './job-jitter.js';
export { MAX_JOB_NAME_LENGTH } from './job-name.js';
export type { CatchUpPolicy, HolderLostPolicy } from './job-policies.js';
export type { ShardsOption } from './job-shards.js';
export type { JobInfo } from './job-slots.js';
export { JobSlots } from './job-slots.js';
