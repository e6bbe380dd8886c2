/**
 * Span, attribute and metric names the exporter emits. They follow the OpenTelemetry semantic
 * convention style (dotted lower-case namespaces, units in the instrument, not in the name) under
 * the `fleetcron.` namespace, plus the general `error.type` attribute.
 */

/** Span names. */
export const SpanNames = {
  /** One claimed fire on the winning instance; the job's own spans are its children. */
  fire: 'fleetcron.fire',
  /** One attempt of a fire (only with `attemptMiddleware`, e.g. placed after `retry()`). */
  attempt: 'fleetcron.attempt',
  /** A claim this instance did not win (`lost`, `busy`, `failed`); only with `losingSpans`. */
  claim: 'fleetcron.claim',
} as const;

/** Attribute keys on spans and metric data points. */
export const Attr = {
  /** Job name (string). */
  job: 'fleetcron.job',
  /** Scheduled fire time, ISO 8601 UTC (string). */
  fireScheduledTime: 'fleetcron.fire.scheduled_time',
  /** Start of the run minus the scheduled time, ms (int), on the fleet's (backend's) clock. */
  fireLagMs: 'fleetcron.fire.lag_ms',
  /** The scheduler instance id (string). */
  instanceId: 'fleetcron.instance.id',
  /** Fencing token of the fire's lease (int). */
  fencingToken: 'fleetcron.fencing_token',
  /** Lock backend, e.g. `memory`, `postgres` (string). */
  lockBackend: 'fleetcron.lock.backend',
  /** Answer of the claim: `won`, `lost`, `busy`, `failed` (string). */
  claimResult: 'fleetcron.claim.result',
  /** Why a claim was lost: `claimed`, `stale`, `early` (string). */
  claimLostReason: 'fleetcron.claim.lost_reason',
  /** Round trip of the claim, ms (double). */
  claimDurationMs: 'fleetcron.claim.duration_ms',
  /** Attempt number, 1-based (int). */
  attempt: 'fleetcron.attempt',
  /** Outcome: `succeeded`, `failed`, `timed_out`, `lease_lost` (string). */
  runStatus: 'fleetcron.run.status',
  /** Why a fire was skipped: `overlap`, `paused`, `backend_unavailable`, `stopping` (string). */
  skipReason: 'fleetcron.skip.reason',
  /** Error class or fleetcron error code of a failure (semantic-convention `error.type`). */
  errorType: 'error.type',
  /** Leader mode: the election's name (string). */
  election: 'fleetcron.election',
  /** Why a retention run stopped: `done`, `budget`, `signal` (string). */
  prunedStoppedBy: 'fleetcron.history.stopped_by',
  /** The notifier of an alert delivery, e.g. `webhook` (string). */
  notifier: 'fleetcron.alert.notifier',
  /** Whether the failed alert delivery attempt was the last one: the delivery gave up (boolean). */
  gaveUp: 'fleetcron.alert.gave_up',
} as const;

/** Metric instrument names. */
export const MetricNames = {
  /** Counter `{run}`: finished runs by job and status. */
  runs: 'fleetcron.runs',
  /**
   * UpDownCounter `{leader}`: leader mode, schedulers of this process leading the election (by
   * election): 1 on the leader, 0 on followers; summed over the fleet, more than 1 only briefly.
   */
  leader: 'fleetcron.leader',
  /** UpDownCounter `{run}`: runs in progress by job. */
  runsActive: 'fleetcron.runs.active',
  /** Histogram `s`: run duration by job and status. */
  runDuration: 'fleetcron.run.duration',
  /** Histogram `s`: claim round trip by backend and result. */
  claimDuration: 'fleetcron.claim.duration',
  /** Histogram `s`: start of the run minus its scheduled time, by job. */
  fireLag: 'fleetcron.fire.lag',
  /** Counter `{fire}`: fires whose time passed while the process could not act, by job. */
  fireMissed: 'fleetcron.fire.missed',
  /** Counter `{fire}`: fires the claiming instance did not run, by job and reason. */
  fireSkipped: 'fleetcron.fire.skipped',
  /** Counter `{lease}`: leases lost while the job ran, by job. */
  leaseLost: 'fleetcron.lease.lost',
  /** Counter `{error}`: history writes that failed, by job. */
  storeErrors: 'fleetcron.store.errors',
  /**
   * Counter `{run}`: runs that started before their scheduled time by the fleet's clock (the
   * lock backend's), by job. Should stay 0; `fire.lag` records only lateness.
   */
  fireEarly: 'fleetcron.fire.early',
  /**
   * Gauge `s`: each instance's estimated offset from the backend's clock (backend − local; positive:
   * the local clock runs behind), by instance and backend.
   */
  clockOffset: 'fleetcron.clock.offset',
  /**
   * Gauge `s`: when each job last succeeded on this instance (end of its last `succeeded` run,
   * epoch seconds), by job: the dead-man's switch of the `FleetcronJobOverdue` rule.
   */
  lastSuccess: 'fleetcron.run.last_success',
  /**
   * Counter `{attempt}`: failed alert delivery attempts (`alert.delivery_failed`), by notifier and
   * whether the delivery gave up.
   */
  alertDeliveryFailed: 'fleetcron.alert.delivery_failed',
  /**
   * Counter `{execution}`: history rows deleted by the retention job (`history.pruned`), by why
   * its run stopped (`done`, `budget`, `signal`): a steady `budget` means the bound is not kept up.
   */
  historyPruned: 'fleetcron.history.pruned',
  /** Gauge `s`: round trip of the sample the instance's clock offset rests on, by instance and backend. */
  clockRtt: 'fleetcron.clock.rtt',
} as const;

/** Instrumentation scope name of the tracer and meter. */
export const INSTRUMENTATION_SCOPE = '@fleetcron/exporter-otel';

/** Instrumentation scope version (the package version). */
export const INSTRUMENTATION_VERSION = '0.1.0';
