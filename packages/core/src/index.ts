/**
 * `@fleetcron/core`: what an application imports. The scheduler, triggers, middleware, errors,
 * events, clocks, the in-memory lock/store/elector, the fleet client, and the contract types a
 * custom trigger, middleware, lock, store or elector implements. Helpers only an adapter needs
 * (validators, cursors, error-text bounding, deadlines, claim-window constants) are in
 * `@fleetcron/core/backend`; see the README's "Entries" section. `test/entries.test.ts` pins
 * this list: adding an export is a decision, not an accident.
 *
 * @module @fleetcron/core
 */

// alerts and notifiers
export {
  ALERT_KINDS,
  ALERT_SEVERITIES,
  type Alert,
  type AlertDelivery,
  type AlertDeliveryOptions,
  type AlertEvent,
  type AlertInput,
  type AlertKind,
  type AlertSeverity,
  type AlertState,
  alertId,
  alertKey,
  callbackNotifier,
  createAlertDelivery,
  DEFAULT_DELIVERY_ATTEMPTS,
  DEFAULT_DELIVERY_MAX_ELAPSED_MS,
  DEFAULT_DELIVERY_TIMEOUT_MS,
  type DeliveryFailure,
  type DeliveryResult,
  type Notifier,
  NotifyFailedError,
  type NotifyOptions,
  NotifyTimeoutError,
  openAlert,
  resolveAlert,
} from './alerts/index.js';
// the audit log: who paused, ran or changed what, recorded with the mutation
export {
  AUDIT_ACTIONS,
  type AuditAction,
  type AuditEntry,
  AuditNotKeptError,
  type AuditPage,
  type AuditQuery,
  type AuditRecord,
  type AuditRetention,
  type AuditStore,
  DEFAULT_AUDIT_MAX_AGE_MS,
  DEFAULT_AUDIT_MAX_ENTRIES,
  DEFAULT_AUDIT_PAGE,
  type JsonObject,
  MAX_ACTOR_LENGTH,
  MAX_AUDIT_DETAILS_BYTES,
  MAX_AUDIT_NOTE_LENGTH,
  MAX_AUDIT_PAGE,
  type ScheduleReplaceAction,
} from './audit/index.js';
export type { BackoffOptions, Jitter } from './backoff.js';
// calendars of excluded fires (a job's `exclude`)
export {
  type AnyOfSpec,
  anyOf,
  type Calendar,
  type CalendarSpec,
  calendarFromSpec,
  type ExcludedDate,
  type ExcludedRange,
  type ExclusionsOptions,
  type ExclusionsSpec,
  exclusions,
  MAX_CALENDAR_ENTRIES,
  type Weekday,
  type WeeklyWindow,
} from './calendar/index.js';
export {
  Candidate,
  type CandidateEvent,
  type CandidateOptions,
  type ElectionCandidate,
  type Leadership,
  type LeadershipLostReason,
} from './candidate.js';
// clocks
export { type Clock, offsetClock, realClock, type TimerHandle } from './clock.js';
// leader election: the Elector contract, Candidate, the in-memory elector
export {
  type CampaignRequest,
  type CampaignResult,
  type Elector,
  type ElectorCapabilities,
  type LeaderInfo,
  MAX_ELECTION_LENGTH,
  NotLeaderError,
} from './elector.js';
// errors
export {
  AmbiguousCronDialectError,
  BackendUnavailableError,
  DuplicateJobError,
  FleetcronError,
  type FleetcronErrorCode,
  type FleetcronErrorOptions,
  InvalidCalendarError,
  InvalidCronError,
  InvalidOptionError,
  isFleetcronError,
  JobTimeoutError,
  LeaseLostError,
  LeaseTooShortError,
  SchedulerStoppedError,
  TriggerError,
  UnknownJobError,
  UnknownTimezoneError,
} from './errors.js';
// events
export {
  EVENTS_CHANNEL,
  type FleetcronEvent,
  type FleetcronEventType,
  type FleetEvent,
  subscribe,
} from './events.js';
export { FakeClock } from './fake-clock.js';
// fleet control
export {
  type ActorOptions,
  FleetClient,
  type FleetClientOptions,
  type FleetHistoryPage,
  type FleetHistoryQuery,
  type FleetJob,
  type FleetSchedule,
  type FleetSchedulePage,
  type FleetView,
  type RunRequestOptions,
} from './fleet/fleet-client.js';
export type { UpcomingFire } from './fleet/upcoming-fires.js';
export { wallClock, type ZonedTime, zonedTime } from './fleet/zoned-time.js';
export type { ClockOffset } from './fleet-clock/offset-estimator.js';
// the Lock contract and the in-memory lock
export type {
  BatchOptions,
  CatchUpClaim,
  ClaimedFire,
  ClaimRequest,
  ClaimResult,
  Lease,
  Lock,
  LockCapabilities,
  LockInspection,
  LostReason,
  MarkReading,
} from './lock.js';
// logging
export { type Logger, silentLogger } from './logger.js';
export { MemoryElector, type MemoryElectorOptions } from './memory-elector.js';
export { MemoryLock, type MemoryLockOptions } from './memory-lock.js';
export { MemoryStore, type MemoryStoreOptions } from './memory-store.js';
export { recover } from './middleware/recover.js';
export { type RetryBackoff, type RetryOptions, retry } from './middleware/retry.js';
export { skipIfRunning } from './middleware/skip-if-running.js';
export { timeout } from './middleware/timeout.js';
// middleware
export {
  compose,
  type JobContext,
  type JobHandler,
  type JobLease,
  type Middleware,
  type Next,
  type RunRequestRef,
} from './middleware.js';
// bounded history: the retention job and the Store's per-job pruning
export { MAX_PRUNE_JOB_LIMIT, type PruneJobOptions } from './prune-job.js';
export type {
  CatchUpSpec,
  ExclusionSpec,
  FleetStore,
  InstanceClock,
  InstanceRecord,
  LiveInstance,
  PauseOptions,
  RegisteredJob,
  RunRequest,
  RunRequestDecision,
  RunRequestInput,
  RunRequestState,
  TakenRunRequest,
  TakeRunRequestsOptions,
  TriggerSpec,
  WatchRunRequests,
} from './registry.js';
export {
  MAX_RUN_REQUEST_DATA_BYTES,
  RUN_REQUEST_TAKE_MS,
} from './registry.js';
export {
  DEFAULT_RETENTION_EVERY_MS,
  DEFAULT_RETENTION_JOB_NAME,
  DEFAULT_RETENTION_KEEP_LAST,
  DEFAULT_RETENTION_MAX_AGE_MS,
  DEFAULT_RETENTION_ROWS_PER_CALL,
  DEFAULT_RETENTION_ROWS_PER_RUN,
  type HistoryRetentionOptions,
  historyRetention,
  type RetentionReport,
} from './retention/index.js';
export type { ManualRunOutcome, SkipReason } from './scheduler/fire/index.js';
export { DEFAULT_HEARTBEAT_MS } from './scheduler/fleet-control/index.js';
export type {
  CatchUpPolicy,
  HolderLostPolicy,
  JobDefinition,
  JobInfo,
  OverlapPolicy,
  ShardsOption,
} from './scheduler/job/index.js';
export { MAX_JITTER_MS, MAX_JOB_NAME_LENGTH } from './scheduler/job/index.js';
export {
  DEFAULT_ELECTION,
  DEFAULT_LEADER_TTL_MS,
  DEFAULT_SHARD_GRACE_MS,
  type LeaderOptions,
  type SchedulerMode,
} from './scheduler/leader/index.js';
export type { SchedulerState, StopOptions } from './scheduler/lifecycle.js';
export {
  DEFAULT_CLAIM_BATCH_SIZE,
  DEFAULT_DRAIN_MS,
  DEFAULT_LEASE_MS,
  DEFAULT_RUN_REQUEST_POLL_MS,
  type SchedulerOptions,
} from './scheduler/options.js';
// scheduler
export { Scheduler } from './scheduler/scheduler.js';
export { DEFAULT_CLOCK_SKEW_WARN_MS } from './scheduler/timing/index.js';
// stored schedules (schedules as data)
export {
  type CreateScheduleInput,
  DEFAULT_SCHEDULE_POLL_MS,
  DEFAULT_SCHEDULE_RESYNC_MS,
  DuplicateScheduleError,
  type HandlerDefaults,
  type JsonValue,
  MAX_HANDLER_NAME_LENGTH,
  MAX_SCHEDULE_DATA_BYTES,
  MAX_SCHEDULE_ID_LENGTH,
  MAX_SCHEDULE_NOTE_LENGTH,
  type RefusedSchedule,
  type ScheduleActor,
  type ScheduleChange,
  ScheduleConflictError,
  type ScheduleContext,
  type ScheduleDefinition,
  type ScheduleHandler,
  type ScheduleInput,
  type ScheduleOptions,
  type SchedulePage,
  type SchedulePatch,
  type ScheduleQuery,
  type ScheduleRef,
  type ScheduleRetry,
  type ScheduleRun,
  ScheduleServer,
  type ScheduleServerOptions,
  type ScheduleStore,
  type ScheduleWrite,
  type ServedSchedule,
  type StoredSchedule,
  type TriggerSpecInput,
  UnknownScheduleError,
} from './schedules/index.js';
export { describeFireGroup, type FireGroup, groupFires } from './shards/fire-groups.js';
// sharded fires and their history
export { MAX_SHARDS, type ShardInfo } from './shards/shard-info.js';
// the Store contract (history, fleet registry) and the in-memory store
export type {
  Execution,
  HistoryPage,
  HistoryQuery,
  JobState,
  RunStatus,
  Store,
} from './store.js';
// triggers
export type { Trigger } from './trigger.js';
export { at } from './triggers/at.js';
export { type CronOptions, type CronTrigger, cron } from './triggers/cron.js';
export type { CronDialect } from './triggers/dialect.js';
export { type EveryOptions, every } from './triggers/every.js';
// the fleet watchdog: failed runs, missed fires and overdue jobs, notified once fleet-wide
export {
  DEFAULT_WATCHDOG_EVERY_MS,
  DEFAULT_WATCHDOG_JOB_NAME,
  DEFAULT_WATCHDOG_SETTLE_MS,
  type FleetWatchdogOptions,
  fleetWatchdog,
  WATCHDOG_MAX_LOOKBACK_MS,
  WatchdogDeliveryError,
} from './watchdog/index.js';
