import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import * as backendEntry from '../src/backend.js';
import * as mainEntry from '../src/index.js';

// The two entries of @fleetcron/core, pinned: adding, moving or dropping an export fails here,
// so it is a decision (update the list and the README's "Entries" section), never an accident.

/** Everything `@fleetcron/core` exports, values and types (see README "Entries"). */
const MAIN = [
  // the audit log
  'AUDIT_ACTIONS',
  'AuditAction',
  'AuditEntry',
  'AuditNotKeptError',
  'AuditPage',
  'AuditQuery',
  'AuditRecord',
  'AuditRetention',
  'AuditStore',
  'DEFAULT_AUDIT_MAX_AGE_MS',
  'DEFAULT_AUDIT_MAX_ENTRIES',
  'DEFAULT_AUDIT_PAGE',
  'JsonObject',
  'MAX_ACTOR_LENGTH',
  'MAX_AUDIT_DETAILS_BYTES',
  'MAX_AUDIT_NOTE_LENGTH',
  'MAX_AUDIT_PAGE',
  'ScheduleReplaceAction',
  'ALERT_KINDS',
  'ALERT_SEVERITIES',
  'Alert',
  'AlertDelivery',
  'AlertDeliveryOptions',
  'AlertEvent',
  'AlertInput',
  'AlertKind',
  'AlertSeverity',
  'AlertState',
  'alertId',
  'alertKey',
  'BackoffOptions',
  'callbackNotifier',
  'createAlertDelivery',
  'DEFAULT_DELIVERY_ATTEMPTS',
  'DEFAULT_DELIVERY_MAX_ELAPSED_MS',
  'DEFAULT_DELIVERY_TIMEOUT_MS',
  'DeliveryFailure',
  'DeliveryResult',
  'Jitter',
  'Notifier',
  'NotifyFailedError',
  'NotifyOptions',
  'NotifyTimeoutError',
  'openAlert',
  'resolveAlert',
  'ActorOptions',
  'AmbiguousCronDialectError',
  'AnyOfSpec',
  'anyOf',
  'at',
  'BackendUnavailableError',
  'BatchOptions',
  'Calendar',
  'CampaignRequest',
  'CampaignResult',
  'Candidate',
  'CandidateEvent',
  'CandidateOptions',
  'CatchUpClaim',
  'CatchUpPolicy',
  'CalendarSpec',
  'calendarFromSpec',
  'CatchUpSpec',
  'ClaimedFire',
  'ClaimRequest',
  'ClaimResult',
  'Clock',
  'ClockOffset',
  'compose',
  'cron',
  'CronDialect',
  'CronOptions',
  'CronTrigger',
  'DEFAULT_CLAIM_BATCH_SIZE',
  'DEFAULT_CLOCK_SKEW_WARN_MS',
  'DEFAULT_DRAIN_MS',
  'DEFAULT_ELECTION',
  'DEFAULT_HEARTBEAT_MS',
  'DEFAULT_LEADER_TTL_MS',
  'DEFAULT_LEASE_MS',
  'DEFAULT_RUN_REQUEST_POLL_MS',
  'DEFAULT_SHARD_GRACE_MS',
  'describeFireGroup',
  'DuplicateJobError',
  'ElectionCandidate',
  'Elector',
  'ElectorCapabilities',
  'EVENTS_CHANNEL',
  'every',
  'EveryOptions',
  'Execution',
  'FakeClock',
  'FireGroup',
  'FleetClient',
  'FleetClientOptions',
  'FleetcronError',
  'FleetcronErrorCode',
  'FleetcronErrorOptions',
  'FleetcronEvent',
  'FleetcronEventType',
  'FleetEvent',
  'FleetHistoryPage',
  'FleetHistoryQuery',
  'FleetJob',
  'FleetStore',
  'FleetView',
  'groupFires',
  'HistoryPage',
  'HistoryQuery',
  'HolderLostPolicy',
  'InstanceClock',
  'InstanceRecord',
  'ExcludedDate',
  'ExcludedRange',
  'ExclusionsOptions',
  'ExclusionSpec',
  'ExclusionsSpec',
  'exclusions',
  'InvalidCalendarError',
  'InvalidCronError',
  'MAX_CALENDAR_ENTRIES',
  'UpcomingFire',
  'Weekday',
  'WeeklyWindow',
  'InvalidOptionError',
  'isFleetcronError',
  'JobContext',
  'JobDefinition',
  'JobHandler',
  'JobInfo',
  'JobLease',
  'JobState',
  'JobTimeoutError',
  'LeaderInfo',
  'LeaderOptions',
  'Leadership',
  'LeadershipLostReason',
  'Lease',
  'LeaseLostError',
  'LeaseTooShortError',
  'LiveInstance',
  'Lock',
  'LockCapabilities',
  'LockInspection',
  'MarkReading',
  'Logger',
  'LostReason',
  'ManualRunOutcome',
  'MAX_ELECTION_LENGTH',
  'MAX_JITTER_MS',
  'MAX_JOB_NAME_LENGTH',
  'MAX_SHARDS',
  'MemoryElector',
  'MemoryElectorOptions',
  'MemoryLock',
  'MemoryLockOptions',
  'MemoryStore',
  'MemoryStoreOptions',
  'MAX_PRUNE_JOB_LIMIT',
  'PruneJobOptions',
  'DEFAULT_RETENTION_EVERY_MS',
  'DEFAULT_RETENTION_JOB_NAME',
  'DEFAULT_RETENTION_KEEP_LAST',
  'DEFAULT_RETENTION_MAX_AGE_MS',
  'DEFAULT_RETENTION_ROWS_PER_CALL',
  'DEFAULT_RETENTION_ROWS_PER_RUN',
  'HistoryRetentionOptions',
  'historyRetention',
  'RetentionReport',
  'DEFAULT_WATCHDOG_EVERY_MS',
  'DEFAULT_WATCHDOG_JOB_NAME',
  'DEFAULT_WATCHDOG_SETTLE_MS',
  'FleetWatchdogOptions',
  'fleetWatchdog',
  'WATCHDOG_MAX_LOOKBACK_MS',
  'WatchdogDeliveryError',
  'Middleware',
  'Next',
  'NotLeaderError',
  'offsetClock',
  'OverlapPolicy',
  'PauseOptions',
  'realClock',
  'recover',
  'RegisteredJob',
  'retry',
  'RetryBackoff',
  'RetryOptions',
  'RunRequest',
  'RunRequestDecision',
  'RunRequestOptions',
  'RunRequestRef',
  'RunRequestInput',
  'RunRequestState',
  'MAX_RUN_REQUEST_DATA_BYTES',
  'RUN_REQUEST_TAKE_MS',
  'TakenRunRequest',
  'TakeRunRequestsOptions',
  'RunStatus',
  'Scheduler',
  'SchedulerMode',
  'SchedulerOptions',
  'SchedulerState',
  'SchedulerStoppedError',
  'ShardInfo',
  'ShardsOption',
  'silentLogger',
  'skipIfRunning',
  'SkipReason',
  'StopOptions',
  'Store',
  'subscribe',
  'timeout',
  'TimerHandle',
  'Trigger',
  'TriggerError',
  'TriggerSpec',
  'UnknownJobError',
  'UnknownTimezoneError',
  'wallClock',
  'WatchRunRequests',
  'zonedTime',
  'ZonedTime',
  'CreateScheduleInput',
  'FleetSchedule',
  'FleetSchedulePage',
  'DEFAULT_SCHEDULE_POLL_MS',
  'DEFAULT_SCHEDULE_RESYNC_MS',
  'DuplicateScheduleError',
  'HandlerDefaults',
  'JsonValue',
  'MAX_HANDLER_NAME_LENGTH',
  'MAX_SCHEDULE_DATA_BYTES',
  'MAX_SCHEDULE_ID_LENGTH',
  'MAX_SCHEDULE_NOTE_LENGTH',
  'RefusedSchedule',
  'ScheduleActor',
  'ScheduleChange',
  'ScheduleConflictError',
  'ScheduleContext',
  'ScheduleDefinition',
  'ScheduleHandler',
  'ScheduleInput',
  'ScheduleOptions',
  'SchedulePage',
  'SchedulePatch',
  'ScheduleQuery',
  'ScheduleRef',
  'ScheduleRetry',
  'ScheduleRun',
  'ScheduleServer',
  'ScheduleServerOptions',
  'ScheduleStore',
  'ScheduleWrite',
  'ServedSchedule',
  'StoredSchedule',
  'TriggerSpecInput',
  'UnknownScheduleError',
];

/** Everything `@fleetcron/core/backend` exports, values and types. */
const BACKEND = [
  // the audit log
  'AUDIT_PRUNE_BATCH',
  'AuditFilter',
  'auditFilter',
  'boundActor',
  'checkActor',
  'checkAuditAction',
  'checkAuditDetails',
  'checkAuditNote',
  'encodeAuditCursor',
  'keepsAudit',
  'MemoryAudit',
  'pauseAuditRecord',
  'replaceAuditAction',
  'resolveAuditRetention',
  'runRequestAuditRecord',
  'scheduleAuditRecord',
  'assertBatchSize',
  'assertCampaign',
  'calendarSpecOf',
  'assertCatchUpClaim',
  'assertClaimRequest',
  'assertInstanceRecord',
  'assertLockKey',
  'assertNoBidiControl',
  'assertNonEmptyString',
  'assertNonNegativeMs',
  'assertPositiveInteger',
  'assertPositiveMs',
  'BIDI_CONTROL',
  'boundErrorText',
  'ClockOffsetEstimator',
  'ClockSample',
  'compareNewestFirst',
  'CORE_VERSION',
  'decodeCursor',
  'decodeShard',
  'DEFAULT_EARLY_TOLERANCE_MS',
  'DEFAULT_MAX_ERROR_LENGTH',
  'DEFAULT_WINDOW_MS',
  'DEFINITION_SWITCH_HEARTBEATS',
  'DefinitionGroup',
  'definitionGroups',
  'definitionHash',
  'DefinitionHashInput',
  'DefinitionInForce',
  'definitionsInForce',
  'DRIFT_PER_MS',
  'driftingJobs',
  'eachKey',
  'encodeCursor',
  'encodeShard',
  'fleetClock',
  'hasFleetControl',
  'INSTANCE_EXPIRY_HEARTBEATS',
  'instanceExpired',
  'isShardInfo',
  'MAX_TIMER_MS',
  'newJobState',
  'newRunRequest',
  'DECIDED_RUN_REQUEST_KEEP_MS',
  'decidesRunRequests',
  'isTakenRunRequest',
  'runRequestPhase',
  'takeLeaseMs',
  'nextFires',
  'normalizeShard',
  'OffsetEstimatorOptions',
  'parseShardKey',
  'partKey',
  'registeredJob',
  'RegisteredJobInput',
  'settleWithin',
  'SHARD_KEY_SEPARATOR',
  'sleepOn',
  'statusFilter',
  'resolvePruneJob',
  'PruneJobBounds',
  'TERMINAL_STATUSES',
  'TimerSource',
  'toError',
  'triggerFromSpec',
  'triggerSpecOf',
  'assertExpectedVersion',
  'assertWriter',
  'checkHandlerName',
  'checkScheduleId',
  'DEFAULT_SCHEDULE_PAGE',
  'encodeScheduleCursor',
  'hasSchedules',
  'MAX_SCHEDULE_PAGE',
  'MemorySchedules',
  'normalizeScheduleDefinition',
  'SCHEDULE_JOB_PREFIX',
  'scheduleJob',
  'scheduleJobName',
  'scheduleQuery',
];

/** Internals: exported by neither entry (they were, before the backend entry). */
const INTERNAL = [
  'MANUAL_CLAIM_TRIES',
  'MAX_EARLY_RETRIES',
  'MEMORY_ELECTOR_CAPABILITIES',
  'MEMORY_MAX_BATCH',
  'STOP_GRACE_MS',
  'abortMarginMs',
  'claimDelayMs',
  'defaultInstanceId',
  'fireLockKey',
  'partRank',
  'placeParts',
  'positionOf',
  'publish',
  'sortIds',
];

const SRC = fileURLToPath(new URL('../src/', import.meta.url));
const PACKAGES = fileURLToPath(new URL('../../', import.meta.url));
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/** Names (values and types) a module exports, read by the TypeScript checker. */
function exportedNames(entries: string[]): Map<string, string[]> {
  const program = ts.createProgram(entries, {
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    target: ts.ScriptTarget.ES2022,
    noEmit: true,
    types: [],
    skipLibCheck: true,
  });
  const checker = program.getTypeChecker();
  const out = new Map<string, string[]>();
  for (const entry of entries) {
    const file = program.getSourceFile(entry);
    const symbol = file && checker.getSymbolAtLocation(file);
    if (!symbol) throw new Error(`cannot read the exports of ${entry}`);
    out.set(
      entry,
      checker.getExportsOfModule(symbol).map((s) => s.name),
    );
  }
  return out;
}

const sorted = (names: Iterable<string>) => [...names].sort((a, b) => a.localeCompare(b, 'en'));

describe('the entries of @fleetcron/core', () => {
  const mainFile = join(SRC, 'index.ts');
  const backendFile = join(SRC, 'backend.ts');
  const names = exportedNames([mainFile, backendFile]);

  it('@fleetcron/core exports exactly the pinned user-facing list (values and types)', () => {
    expect(sorted(names.get(mainFile) ?? [])).toEqual(sorted(MAIN));
  });

  it('@fleetcron/core/backend exports exactly the pinned adapter list (values and types)', () => {
    expect(sorted(names.get(backendFile) ?? [])).toEqual(sorted(BACKEND));
  });

  it('the runtime values of each entry are the pinned names that are values', () => {
    const mainValues = Object.keys(mainEntry);
    const backendValues = Object.keys(backendEntry);
    expect(mainValues.length).toBeGreaterThan(40);
    expect(backendValues.length).toBeGreaterThan(30);
    for (const name of mainValues) expect(MAIN).toContain(name);
    for (const name of backendValues) expect(BACKEND).toContain(name);
  });

  it('no name is in both entries, and the internals are in neither', () => {
    expect(MAIN.filter((name) => BACKEND.includes(name))).toEqual([]);
    for (const name of INTERNAL) {
      expect(MAIN).not.toContain(name);
      expect(BACKEND).not.toContain(name);
      expect(Object.keys(mainEntry)).not.toContain(name);
      expect(Object.keys(backendEntry)).not.toContain(name);
    }
  });

  it('a backend helper throws the same error classes the application entry exports', () => {
    expect(() => backendEntry.assertPositiveMs('leaseMs', -1)).toThrow(
      mainEntry.InvalidOptionError,
    );
    expect(() => backendEntry.assertBatchSize([1, 2, 3], 2)).toThrow(mainEntry.InvalidOptionError);
    expect(mainEntry.isFleetcronError(backendEntry.toError('x'))).toBe(false);
  });
});

/** Named imports of `specifier` in every `.ts` file under `dir` (recursively). */
function importsOf(dir: string, specifier: string): Map<string, string> {
  const found = new Map<string, string>();
  const quoted = specifier.replace(/[/.]/g, (c) => `\\${c}`);
  const pattern = new RegExp(`import\\s+(?:type\\s+)?\\{([^}]*)\\}\\s*from\\s*'${quoted}'`, 'g');
  const walk = (path: string): void => {
    for (const entry of readdirSync(path, { withFileTypes: true })) {
      if (entry.name === 'node_modules' || entry.name === 'dist' || entry.name.startsWith('.'))
        continue;
      const full = join(path, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (/\.(ts|tsx|cts|mts)$/.test(entry.name)) {
        for (const match of readFileSync(full, 'utf8').matchAll(pattern)) {
          for (const item of (match[1] ?? '').split(',')) {
            const name = item
              .trim()
              .replace(/^type\s+/, '')
              .split(/\s+as\s+/)[0];
            if (name) found.set(name, full);
          }
        }
      }
    }
  };
  walk(dir);
  return found;
}

describe('what the other packages import from @fleetcron/core', () => {
  const others = [
    ...readdirSync(PACKAGES)
      .filter((name) => name !== 'core')
      .map((name) => join(PACKAGES, name)),
    join(ROOT, 'examples'),
    join(ROOT, 'benchmarks'),
  ];

  it('every name an adapter or tool imports from @fleetcron/core/backend is exported there', () => {
    const used = new Map<string, string>();
    for (const pkg of others) {
      for (const [name, file] of importsOf(pkg, '@fleetcron/core/backend')) {
        used.set(name, file);
      }
    }
    // the adapters need at least the validators, claim checks, cursors and deadline helper
    for (const name of [
      'assertPositiveMs',
      'assertBatchSize',
      'assertClaimRequest',
      'assertLockKey',
      'DEFAULT_WINDOW_MS',
      'boundErrorText',
      'encodeCursor',
      'decodeCursor',
      'settleWithin',
    ]) {
      expect(used.has(name), `${name} is not imported by any adapter`).toBe(true);
    }
    for (const [name, file] of used) expect(BACKEND, `${file} imports ${name}`).toContain(name);
  });

  it('every name imported from @fleetcron/core is exported by the main entry', () => {
    for (const pkg of others) {
      for (const [name, file] of importsOf(pkg, '@fleetcron/core')) {
        expect(MAIN, `${file} imports ${name} from @fleetcron/core`).toContain(name);
      }
    }
  });
});
