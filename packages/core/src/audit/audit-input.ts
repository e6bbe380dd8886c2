import { InvalidOptionError } from '../errors.js';
import { checkJsonData } from '../json-data.js';
import { assertNoBidiControl, assertPositiveInteger } from '../validate.js';
import {
  type AuditAction,
  type AuditQuery,
  type AuditRetention,
  DEFAULT_AUDIT_MAX_AGE_MS,
  DEFAULT_AUDIT_MAX_ENTRIES,
  DEFAULT_AUDIT_PAGE,
  type JsonObject,
  MAX_AUDIT_DETAILS_BYTES,
  MAX_AUDIT_NOTE_LENGTH,
  MAX_AUDIT_PAGE,
} from './audit-log.js';

/** Longest `by` (who asked) a mutation accepts, characters. */
export const MAX_ACTOR_LENGTH = 200;

/** Control characters other than newline, carriage return and tab (ESC, BEL, DEL, C1...). */
const NOTE_CONTROL = /[^\P{Cc}\t\n\r]/u;
/** What an action name looks like (`pause`, `schedule.update`, `alert.acknowledge`). */
const ACTION_NAME = /^[a-z][a-z0-9]*(?:[.-][a-z0-9]+)*$/;

/**
 * Checks who makes a change as a store does: a non-empty string of at most
 * {@link MAX_ACTOR_LENGTH} characters (any characters: stores keep what they are given, NUL
 * included). Returns it.
 *
 * @throws InvalidOptionError naming `field` (`by`, `requestedBy`).
 */
export function boundActor(field: string, by: unknown): string {
  if (typeof by !== 'string' || by.trim() === '') {
    throw new InvalidOptionError(
      field,
      "must say who asks: a non-empty string such as 'alice' or 'cli:alice@host'.",
    );
  }
  if (by.length > MAX_ACTOR_LENGTH) {
    throw new InvalidOptionError(
      field,
      `must be at most ${MAX_ACTOR_LENGTH} characters, got ${by.length}; use a short name such as 'alice' or 'cli:alice@host'.`,
    );
  }
  return by;
}

/**
 * Checks who makes a change as `FleetClient` (the user's door) does: {@link boundActor}, and no
 * control characters or bidi controls (a name shown to operators must read as it is). Returns it.
 *
 * @throws InvalidOptionError naming `field` (`by`).
 */
export function checkActor(field: string, by: unknown): string {
  boundActor(field, by);
  if (/\p{Cc}/u.test(by as string)) {
    throw new InvalidOptionError(field, 'must not contain control characters (newlines, ESC...).');
  }
  assertNoBidiControl(field, by as string);
  return by as string;
}

/**
 * Checks an optional note (why): `undefined`/`null` is none; else a string of at most
 * {@link MAX_AUDIT_NOTE_LENGTH} characters, newlines and tabs allowed (CR LF too), no other control
 * characters. Returns the note or `null` (an empty note is none).
 *
 * @throws InvalidOptionError naming `field` (default `note`).
 */
export function checkAuditNote(note: unknown, field = 'note'): string | null {
  if (note === undefined || note === null) return null;
  if (typeof note !== 'string') {
    throw new InvalidOptionError(field, `must be a string (why), got ${typeof note}.`);
  }
  if (note.length > MAX_AUDIT_NOTE_LENGTH) {
    throw new InvalidOptionError(
      field,
      `must be at most ${MAX_AUDIT_NOTE_LENGTH} characters, got ${note.length}; shorten it or link to a ticket.`,
    );
  }
  const control = NOTE_CONTROL.exec(note);
  if (control) {
    throw new InvalidOptionError(
      field,
      `must not contain control characters other than newline and tab (ESC, BEL...), got U+${(control[0].codePointAt(0) as number).toString(16).toUpperCase().padStart(4, '0')} at index ${control.index}.`,
    );
  }
  return note === '' ? null : note;
}

/**
 * Checks an entry's `details`: `undefined`/`null` is none; else a plain JSON object of at most
 * {@link MAX_AUDIT_DETAILS_BYTES}. @throws InvalidOptionError naming `details` or a path in it.
 */
export function checkAuditDetails(details: unknown): JsonObject | null {
  if (details === undefined || details === null) return null;
  if (typeof details !== 'object' || Array.isArray(details)) {
    throw new InvalidOptionError('details', 'must be a plain JSON object, or null.');
  }
  return checkJsonData(details, 'details', MAX_AUDIT_DETAILS_BYTES) as JsonObject;
}

/** Checks an action name (any `[a-z0-9]` words joined by `.` or `-`, at most 64 characters). */
export function checkAuditAction(action: unknown, field = 'action'): AuditAction {
  if (typeof action !== 'string' || action.length > 64 || !ACTION_NAME.test(action)) {
    throw new InvalidOptionError(
      field,
      `must be an audit action such as 'pause', 'run' or 'schedule.update', got ${JSON.stringify(action)}.`,
    );
  }
  return action as AuditAction;
}

/** A checked {@link AuditQuery}: what a store's `listAudit` filters on. */
export interface AuditFilter {
  limit: number;
  job: string | null;
  /** The actions to keep; `null` for every action. */
  actions: AuditAction[] | null;
  /** Entries stored strictly before this time; `null` for no bound. */
  before: number | null;
  /** The `id` of the last entry of the previous page (entries older than it follow); `null` first. */
  after: string | null;
}

/** Checks an {@link AuditQuery}. @throws InvalidOptionError naming the field. */
export function auditFilter(query: AuditQuery | undefined): AuditFilter {
  if (query !== undefined && (typeof query !== 'object' || query === null)) {
    throw new InvalidOptionError(
      'query',
      'must be an object { job?, action?, before?, cursor?, limit? }.',
    );
  }
  const limit = query?.limit ?? DEFAULT_AUDIT_PAGE;
  assertPositiveInteger('limit', limit);
  if (limit > MAX_AUDIT_PAGE) {
    throw new InvalidOptionError('limit', `must be at most ${MAX_AUDIT_PAGE}, got ${limit}.`);
  }
  const job = query?.job ?? null;
  if (job !== null && (typeof job !== 'string' || job === '')) {
    throw new InvalidOptionError('job', 'must be a job name, or absent for every job.');
  }
  const action = query?.action ?? null;
  const actions =
    action === null
      ? null
      : (Array.isArray(action) ? action : [action]).map((a, i) =>
          checkAuditAction(a, Array.isArray(action) ? `action[${i}]` : 'action'),
        );
  if (actions !== null && actions.length === 0) {
    throw new InvalidOptionError(
      'action',
      'must name at least one action, or be absent for every action.',
    );
  }
  const before = query?.before ?? null;
  if (before !== null && (typeof before !== 'number' || !Number.isFinite(before))) {
    throw new InvalidOptionError(
      'before',
      `must be a time in epoch ms, got ${JSON.stringify(before)}.`,
    );
  }
  const cursor = query?.cursor ?? null;
  return { limit, job, actions, before, after: cursor === null ? null : decodeAuditCursor(cursor) };
}

/** The cursor after the entry `id` (opaque). */
export function encodeAuditCursor(id: string): string {
  return Buffer.from(JSON.stringify(['a', id]), 'utf8').toString('base64url');
}

function decodeAuditCursor(cursor: unknown): string {
  if (typeof cursor === 'string') {
    try {
      const [tag, id] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown[];
      if (tag === 'a' && typeof id === 'string' && id !== '') return id;
    } catch {
      // fall through to the typed error
    }
  }
  throw new InvalidOptionError(
    'cursor',
    'is not a cursor returned by listAudit(); pass nextCursor unchanged.',
  );
}

/** A store's audit bounds with their defaults. @throws InvalidOptionError (`audit.maxEntries`, `audit.maxAgeMs`). */
export function resolveAuditRetention(
  options: AuditRetention | undefined,
): Required<AuditRetention> {
  const maxEntries = options?.maxEntries ?? DEFAULT_AUDIT_MAX_ENTRIES;
  const maxAgeMs = options?.maxAgeMs ?? DEFAULT_AUDIT_MAX_AGE_MS;
  assertPositiveInteger('audit.maxEntries', maxEntries);
  assertPositiveInteger('audit.maxAgeMs', maxAgeMs);
  return { maxEntries, maxAgeMs };
}
