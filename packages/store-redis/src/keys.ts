import { encodeKeyPart } from '@fleetcron/redis-shared';

/** The Redis keys that hold one job's history and state; all share the hash tag `{prefix:job}`. */
export interface StoreKeys {
  /**
   * Sorted set, every score 0, member `<startedAt as 16 digits>:<id>`: lexicographic order is
   * exactly `(startedAt, id)` order, so newest-first pages and cursors are single range reads.
   */
  index: string;
  /** Hash: execution id → `<startedAt as 16 digits><execution as JSON>`. */
  executions: string;
  /**
   * Hash: `lastStatus`, `lastFireAt`, `lastFinishedAt` (and, written before 0.2, `paused`,
   * `pausedBy`, `pausedAt`: the fleet's pause hash overrides them). Never expires.
   */
  state: string;
}

/** The keys of job `job` under `prefix`: `{prefix:encodedJob}:h|x|s`. */
export function storeKeys(prefix: string, job: string): StoreKeys {
  const tag = `{${prefix}:${encodeKeyPart(job)}}`;
  return { index: `${tag}:h`, executions: `${tag}:x`, state: `${tag}:s` };
}

/** The set of job names that have history (read by `prune`): `prefix:jobs`. */
export function registryKey(prefix: string): string {
  return `${prefix}:jobs`;
}

/** Largest `startedAt` the index can order: every safe integer has at most 16 digits. */
export const MAX_STARTED_AT = Number.MAX_SAFE_INTEGER;

/** `startedAt` as 16 zero-padded digits (the lexicographic sort key). */
export function padTime(ms: number): string {
  return String(ms).padStart(16, '0');
}

/** The index member of an execution. */
export function indexMember(startedAt: number, id: string): string {
  return `${padTime(startedAt)}:${id}`;
}

/** The keys of the fleet-control data under `prefix`, all with the hash tag `{prefix}`. */
export interface FleetKeys {
  /** Hash: instanceId → `<lastSeenAt>|<heartbeatMs>|<record JSON>`. */
  instances: string;
  /** Counter ordering run requests. */
  sequence: string;
  /**
   * Hash: run request id → the request and its take and decision, as a JSON object of strings
   * (see `run-request-scripts.ts`).
   */
  requestRecords: string;
  /**
   * Sorted set of a job's undecided run requests: member the request id, score the Redis time
   * from which a take may take it (0 when never taken or released, else the last `takenUntil`).
   */
  openRequests(job: string): string;
  /** Sorted set of decided run requests: member the id, score `decidedAt` (collected after 1 h). */
  decidedRequests: string;
  /**
   * List of a job's run requests written before exactly-once requests (0.1.0, entries
   * `<seq>|<requestedAt>|<JSON [id, job, requestedBy]>`): a take moves them to the records.
   */
  requests(job: string): string;
  /** Pub/sub channel announcing run requests (payload: the job name). */
  channel: string;
  /**
   * Hash: job → pause state, `1|<pausedAt>|<pausedBy>` or `0` (see `SET_PAUSED`). Under the
   * fleet's hash tag so a pause and its audit entry are one script on a Cluster too. It overrides
   * the `paused`, `pausedBy` and `pausedAt` fields that stores before 0.2 kept in a job's state
   * hash (read when a job has no entry here).
   */
  paused: string;
}

/** The fleet-control keys under `prefix`: `{prefix}:instances`, `{prefix}:runreq:…`. */
export function fleetKeys(prefix: string): FleetKeys {
  const tag = `{${prefix}}`;
  return {
    instances: `${tag}:instances`,
    sequence: `${tag}:runreq:seq`,
    requestRecords: `${tag}:runreq:r`,
    openRequests: (job) => `${tag}:runreq:o:${encodeKeyPart(job)}`,
    decidedRequests: `${tag}:runreq:d`,
    requests: (job) => `${tag}:runreq:q:${encodeKeyPart(job)}`,
    channel: `${prefix}:runreq`,
    paused: `${tag}:paused`,
  };
}

/** The keys of the stored schedules under `prefix`, all with the hash tag `{prefix}`. */
export interface ScheduleKeys {
  /** Hash: schedule id → record (see `encodeScheduleRecord`), tombstones included. */
  records: string;
  /** Sorted set, every score 0, member the id of each live schedule: pages by id. */
  ids: string;
  /** Sorted set, every score 0, member `<handler> <id>` of each live schedule: pages by handler. */
  byHandler: string;
  /** Pub/sub channel announcing schedule changes (payload: the schedule id). */
  channel: string;
}

/** The stored-schedule keys under `prefix`: `{prefix}:schedules`, `…:ids`, `…:by-handler`. */
export function scheduleKeys(prefix: string): ScheduleKeys {
  const base = `{${prefix}}:schedules`;
  return {
    records: base,
    ids: `${base}:ids`,
    byHandler: `${base}:by-handler`,
    channel: `${prefix}:schedule-changes`,
  };
}

/** The keys of the audit log under `prefix`, all with the hash tag `{prefix}` (see `audit-scripts.ts`). */
export interface AuditKeys {
  /** Sorted set of every entry: score and member the entry's sequence number. */
  log: string;
  /** Hash: sequence number → `<at>|<version>|<job set key length>|<job set key><record JSON>`. */
  entries: string;
  /** Counter numbering the entries. */
  sequence: string;
  /** Sorted set of one job's entries (score and member the sequence number). */
  job(job: string): string;
  /**
   * Pause and resume write tokens (a key per call, expiring after {@link WRITE_TOKEN_TTL_MS}):
   * a `setPaused` script re-sent by ioredis after a reconnect finds its token and records
   * nothing twice.
   */
  pauseToken(token: string): string;
}

/** How long a pause write token is kept, ms: longer than any reconnect-and-resend. */
export const WRITE_TOKEN_TTL_MS = 10 * 60_000;

/** The audit-log keys under `prefix`: `{prefix}:audit`, `…:audit:e`, `…:audit:j:<job>`. */
export function auditKeys(prefix: string): AuditKeys {
  const base = `{${prefix}}:audit`;
  return {
    log: base,
    entries: `${base}:e`,
    sequence: `${base}:seq`,
    job: (job) => `${base}:j:${encodeKeyPart(job)}`,
    pauseToken: (token) => `${base}:t:${token}`,
  };
}
