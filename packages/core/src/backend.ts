/**
 * `@fleetcron/core/backend`: helpers for the authors of a lock, store or elector adapter and for
 * fleetcron's own tools (CLI, admin console, conformance suite), kept out of the application
 * entry `@fleetcron/core`. The contract types (`Lock`, `Store`, `Elector`, ...) and the errors
 * stay in `@fleetcron/core`; import them from there. `test/entries.test.ts` pins this list.
 *
 * @module @fleetcron/core/backend
 */

// the audit log: checks, cursors, the records every store appends, the in-memory log
export {
  AUDIT_PRUNE_BATCH,
  type AuditFilter,
  auditFilter,
  boundActor,
  checkActor,
  checkAuditAction,
  checkAuditDetails,
  checkAuditNote,
  encodeAuditCursor,
  keepsAudit,
  MemoryAudit,
  pauseAuditRecord,
  replaceAuditAction,
  resolveAuditRetention,
  runRequestAuditRecord,
  scheduleAuditRecord,
} from './audit/index.js';
export { calendarSpecOf } from './calendar/index.js';
export { MAX_TIMER_MS, sleepOn } from './clock.js';
export { assertCampaign } from './elector.js';
export { toError } from './errors.js';
// fleet tools: definitions, drift, trigger specs
export { type DefinitionHashInput, definitionHash } from './fleet/definition-hash.js';
export {
  DEFINITION_SWITCH_HEARTBEATS,
  type DefinitionInForce,
  definitionsInForce,
} from './fleet/definitions-in-force.js';
export { type DefinitionGroup, definitionGroups, driftingJobs } from './fleet/drift.js';
export { type RegisteredJobInput, registeredJob } from './fleet/registered-job.js';
export { nextFires, triggerFromSpec, triggerSpecOf } from './fleet/trigger-spec.js';
export { CORE_VERSION } from './fleet/version.js';
export { fleetClock } from './fleet-clock/fleet-clock.js';
export {
  ClockOffsetEstimator,
  type ClockSample,
  DRIFT_PER_MS,
  type OffsetEstimatorOptions,
} from './fleet-clock/offset-estimator.js';
// claims: the default window and tolerance, request checks
export {
  assertBatchSize,
  assertCatchUpClaim,
  assertClaimRequest,
  assertLockKey,
  DEFAULT_EARLY_TOLERANCE_MS,
  DEFAULT_WINDOW_MS,
} from './lock.js';
export { compareNewestFirst, newJobState } from './memory-store.js';
// stores: bounded pruning of one job's history
export { type PruneJobBounds, resolvePruneJob } from './prune-job.js';
export {
  assertInstanceRecord,
  DECIDED_RUN_REQUEST_KEEP_MS,
  decidesRunRequests,
  hasFleetControl,
  INSTANCE_EXPIRY_HEARTBEATS,
  instanceExpired,
  isTakenRunRequest,
  newRunRequest,
  runRequestPhase,
  takeLeaseMs,
} from './registry.js';
export type { TimerSource } from './scheduler/timing/index.js';
// deadlines and time
export { settleWithin } from './scheduler/timing/index.js';
// stored schedules: checks, cursors, the in-memory reference
export {
  assertExpectedVersion,
  assertWriter,
  checkHandlerName,
  checkScheduleId,
  DEFAULT_SCHEDULE_PAGE,
  encodeScheduleCursor,
  hasSchedules,
  MAX_SCHEDULE_PAGE,
  MemorySchedules,
  normalizeScheduleDefinition,
  SCHEDULE_JOB_PREFIX,
  scheduleJob,
  scheduleJobName,
  scheduleQuery,
} from './schedules/index.js';
export { eachKey, parseShardKey, partKey, SHARD_KEY_SEPARATOR } from './shards/part-keys.js';
export {
  decodeShard,
  encodeShard,
  isShardInfo,
  normalizeShard,
} from './shards/shard-info.js';
// stores: error text, cursors, status filters, records
export {
  boundErrorText,
  DEFAULT_MAX_ERROR_LENGTH,
  decodeCursor,
  encodeCursor,
  statusFilter,
  TERMINAL_STATUSES,
} from './store.js';
// option validators (throw InvalidOptionError naming the field)
export {
  assertNoBidiControl,
  assertNonEmptyString,
  assertNonNegativeMs,
  assertPositiveInteger,
  assertPositiveMs,
  BIDI_CONTROL,
} from './validate.js';
