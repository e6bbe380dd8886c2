/* The scheduler's public constants and types, re-exported by `scheduler.ts`. */
export { MAX_EARLY_RETRIES } from './claim-on-time.js';
export { DEFAULT_CLOCK_SKEW_WARN_MS } from './clock-watch.js';
export { abortMarginMs, settleWithin, type TimerSource } from './deadline.js';
export type { SkipReason } from './fire-events.js';
export { DEFAULT_HEARTBEAT_MS } from './heartbeat.js';
export { defaultInstanceId } from './instance-id.js';
export type { JobDefinition, OverlapPolicy } from './job.js';
export { MAX_JOB_NAME_LENGTH } from './job.js';
export type { CatchUpPolicy, HolderLostPolicy } from './job-policies.js';
export type { ShardsOption } from './job-shards.js';
export type { JobInfo } from './job-slots.js';
export {
  DEFAULT_ELECTION,
  DEFAULT_LEADER_TTL_MS,
  DEFAULT_SHARD_GRACE_MS,
  type LeaderOptions,
  type SchedulerMode,
} from './leader-options.js';
export type { ManualRunOutcome } from './manual-runs.js';
export { MANUAL_CLAIM_TRIES } from './manual-runs.js';
export type { SchedulerOptions } from './options.js';
export {
  DEFAULT_CLAIM_BATCH_SIZE,
  DEFAULT_DRAIN_MS,
  DEFAULT_LEASE_MS,
  DEFAULT_RUN_REQUEST_POLL_MS,
} from './options.js';
export { STOP_GRACE_MS } from './shutdown.js';

/** Options of `Scheduler.stop()`. */
export interface StopOptions {
  /** How long to wait for running jobs before aborting them, ms. Default: the scheduler's `drainMs`. */
  drainMs?: number;
}

/** Lifecycle state of a `Scheduler`. */
export type SchedulerState = 'idle' | 'running' | 'stopping';
