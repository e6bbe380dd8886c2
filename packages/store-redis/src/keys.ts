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
  /** Hash: `paused`, `lastStatus`, `lastFireAt`, `lastFinishedAt`. Never expires. */
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
