import { boundActor, checkAuditNote } from '../audit/audit-input.js';
import type { ScheduleReplaceAction } from '../audit/audit-log.js';
import { InvalidOptionError } from '../errors.js';
import { assertPositiveInteger } from '../validate.js';
import type { ScheduleDefinition, StoredSchedule } from './schedule.js';

/** Options of {@link ScheduleStore.listSchedules}. */
export interface ScheduleQuery {
  /** Only schedules of this handler. Default: every handler. */
  handler?: string | null;
  /** Page size, 1 to 1000. Default 100. */
  limit?: number;
  /** `nextCursor` of the previous page. */
  cursor?: string | null;
}

/** One page of schedules, ordered by id. */
export interface SchedulePage {
  schedules: StoredSchedule[];
  /** Pass as `cursor` for the next page; `null` on the last page. */
  nextCursor: string | null;
}

/**
 * What a schedule watcher hears: `changed` after a schedule was created, updated, enabled,
 * disabled or removed (read it with `getSchedule`; a hint only, several changes may come as
 * one); `resync` when notifications may have been lost (the store's push connection came back):
 * read everything again.
 */
export type ScheduleChange = { kind: 'changed'; id: string } | { kind: 'resync' };

/** Who makes a change, and why (kept in the audit log by stores that keep one). */
export interface ScheduleWrite {
  /**
   * Who asked: stored as `updatedBy` (and `createdBy` on create), and as the audit entry's `by`.
   * A non-empty string of at most `MAX_ACTOR_LENGTH` characters (`FleetClient` also refuses
   * control and bidi characters).
   */
  by: string;
  /** Why (at most `MAX_AUDIT_NOTE_LENGTH` characters): the audit entry's `note`. Default none. */
  note?: string | null;
  /**
   * What a `replaceSchedule` records in the audit log: `schedule.enable` / `schedule.disable`
   * when the change only turns the schedule on or off, default `schedule.update`. Ignored by
   * `createSchedule` (`schedule.create`) and `removeSchedule` (`schedule.remove`).
   */
  action?: ScheduleReplaceAction | null;
}

/**
 * The stored-schedules part of a Store. Every method is OPTIONAL on `Store` (as fleet control
 * is), so stores written before schedules keep working; {@link hasSchedules} tells whether a
 * store has them all. Every built-in store implements it (memory, PostgreSQL, Redis, etcd, SQLite).
 *
 * Every write takes a definition already checked by `normalizeScheduleDefinition` (stores run
 * it again: bad input stores nothing), bumps `version` by one, and stamps `updatedAt` (the
 * store's clock where it has one) and `updatedBy`. A store that keeps an audit log records each
 * successful write (`scheduleAuditRecord`) in the same atomic step; a write that fails
 * (`SCHEDULE_CONFLICT`, `DUPLICATE_SCHEDULE`, `UNKNOWN_SCHEDULE`) records nothing. A removed schedule leaves a tombstone that
 * keeps its version, so an id created again continues from it and a server holding an old
 * version never mistakes the new one for it.
 */
export interface ScheduleStore {
  /**
   * Stores a new schedule at version 1 (or, for an id removed before, one past the removed
   * version). @throws DuplicateScheduleError (`DUPLICATE_SCHEDULE`) when the id exists.
   */
  createSchedule(
    id: string,
    definition: ScheduleDefinition,
    write: ScheduleWrite,
  ): Promise<StoredSchedule>;
  /**
   * Replaces the definition of schedule `id` if it is at `expectedVersion`, atomically (one
   * statement or transaction): exactly one of two writers from the same version wins.
   * @throws ScheduleConflictError (`SCHEDULE_CONFLICT`) when it is at another version or removed;
   *   UnknownScheduleError (`UNKNOWN_SCHEDULE`) when it never existed.
   */
  replaceSchedule(
    id: string,
    definition: ScheduleDefinition,
    write: ScheduleWrite & { expectedVersion: number },
  ): Promise<StoredSchedule>;
  /**
   * Removes schedule `id` (leaving its tombstone) if it is at `expectedVersion` (any version when
   * `null`); resolves the removed schedule as it was. @throws ScheduleConflictError,
   * UnknownScheduleError as {@link replaceSchedule}.
   */
  removeSchedule(
    id: string,
    write: ScheduleWrite & { expectedVersion: number | null },
  ): Promise<StoredSchedule>;
  /** The schedule, or `null` when there is none (never created, or removed). */
  getSchedule(id: string): Promise<StoredSchedule | null>;
  /** One page of schedules (removed ones left out), by id, optionally of one handler. */
  listSchedules(query?: ScheduleQuery): Promise<SchedulePage>;
  /**
   * Push capability: calls `listener` soon after any schedule changes (LISTEN/NOTIFY, pub/sub,
   * watch), and with `resync` when notifications may have been lost. Returns the unsubscribe
   * function. Absent: readers poll `listSchedules`.
   */
  watchSchedules?(listener: (change: ScheduleChange) => void): () => void;
}

/** Whether `store` has every required stored-schedule method. */
export function hasSchedules<S extends object>(store: S): store is S & ScheduleStore {
  const s = store as Record<string, unknown>;
  return [
    'createSchedule',
    'replaceSchedule',
    'removeSchedule',
    'getSchedule',
    'listSchedules',
  ].every((name) => typeof s[name] === 'function');
}

/** Default page size of {@link ScheduleStore.listSchedules}. */
export const DEFAULT_SCHEDULE_PAGE = 100;
/** Largest page size of {@link ScheduleStore.listSchedules}. */
export const MAX_SCHEDULE_PAGE = 1_000;

/** Checks a {@link ScheduleQuery}; returns its page size, handler filter and the id to start after. */
export function scheduleQuery(query: ScheduleQuery | undefined): {
  limit: number;
  handler: string | null;
  after: string | null;
} {
  const limit = query?.limit ?? DEFAULT_SCHEDULE_PAGE;
  assertPositiveInteger('limit', limit);
  if (limit > MAX_SCHEDULE_PAGE) {
    throw new InvalidOptionError('limit', `must be at most ${MAX_SCHEDULE_PAGE}, got ${limit}.`);
  }
  const handler = query?.handler ?? null;
  if (handler !== null && (typeof handler !== 'string' || handler === '')) {
    throw new InvalidOptionError('handler', 'must be a handler name, or absent for every handler.');
  }
  const cursor = query?.cursor ?? null;
  return { limit, handler, after: cursor === null ? null : decodeScheduleCursor(cursor) };
}

/** The cursor after schedule `id` (opaque). */
export function encodeScheduleCursor(id: string): string {
  return Buffer.from(JSON.stringify(['s', id]), 'utf8').toString('base64url');
}

function decodeScheduleCursor(cursor: string): string {
  try {
    const [tag, id] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown[];
    if (tag === 's' && typeof id === 'string') return id;
  } catch {
    // fall through to the typed error
  }
  throw new InvalidOptionError(
    'cursor',
    'is not a cursor returned by listSchedules(); pass nextCursor unchanged.',
  );
}

/**
 * Checks a write's `by` (who asked: bounded as `boundActor`) and `note` (`checkAuditNote`).
 * @throws InvalidOptionError (field `by` or `note`).
 */
export function assertWriter(write: ScheduleWrite | undefined): string {
  const by = write?.by;
  if (typeof by !== 'string' || by.trim() === '') {
    throw new InvalidOptionError(
      'by',
      "must say who makes the change: { by: 'alice' } (a non-empty string).",
    );
  }
  boundActor('by', by);
  checkAuditNote(write?.note);
  return by;
}

/** Checks an `expectedVersion` (a positive integer). @throws InvalidOptionError. */
export function assertExpectedVersion(version: unknown): asserts version is number {
  if (typeof version !== 'number' || !Number.isSafeInteger(version) || version < 1) {
    throw new InvalidOptionError(
      'expectedVersion',
      `must be the version you read (a positive integer), got ${JSON.stringify(version)}.`,
    );
  }
}
