import { claimSql, NOW_MS } from './claim.js';
import { claimManySql } from './claim-many.js';
import { extendManySql, releaseManySql } from './lease-batches.js';
import { extendSql, releaseSql } from './lease-functions.js';
import type { LockTables } from './schema.js';

/**
 * The withdraw and read statements. Each is one statement in its own implicit transaction; the
 * exclusive lease lives in the key's row, a per-fire lease in its fire's claim record
 * (`expires_at`). Claims, renewals and releases are calls of the lock's functions.
 */

/**
 * Withdraws a won claim: $1 key, $2 fireAt, $3 token. Deletes the claim record (and with it a
 * per-fire lease) only when it is a win with that token, and then the exclusive slot when it
 * still holds that token. One statement, one implicit transaction. Returns one row, `withdrawn`.
 */
export function withdrawSql(t: LockTables): string {
  return `WITH rec AS (
  DELETE FROM ${t.claims}
  WHERE key = $1::text AND fire_at = $2::bigint AND outcome = 'won' AND token = $3::bigint
  RETURNING key
), x AS (
  UPDATE ${t.keys} k SET x_fire_at = NULL, x_owner = NULL, x_token = NULL, x_expires_at = NULL
  WHERE k.key = $1::text AND k.x_token = $3::bigint AND EXISTS (SELECT 1 FROM rec)
  RETURNING 1
)
SELECT EXISTS (SELECT 1 FROM rec) AS withdrawn`;
}

/**
 * Reads a key: $1 key, $2 windowMs. One row per kept claim record (`kind` = `fire`) and per live
 * lease (`exclusive`, `per_fire`); records past their window and expired leases are left out.
 * One `mark` row (`fire_at` = the key's catch-up mark) when the key has one.
 */
export function inspectSql(t: LockTables): string {
  return `WITH p AS (SELECT $1::text AS key, $2::bigint AS window_ms, ${NOW_MS} AS now_ms)
SELECT 'fire' AS kind, c.fire_at, c.owner, c.outcome, c.token, NULL::bigint AS expires_at
FROM ${t.claims} c JOIN p ON c.key = p.key WHERE c.fire_at >= p.now_ms - p.window_ms
UNION ALL
SELECT 'exclusive', k.x_fire_at, k.x_owner, NULL, k.x_token, k.x_expires_at
FROM ${t.keys} k JOIN p ON k.key = p.key WHERE k.x_expires_at > p.now_ms
UNION ALL
SELECT 'per_fire', c.fire_at, c.owner, NULL, c.token, c.expires_at
FROM ${t.claims} c JOIN p ON c.key = p.key WHERE c.expires_at > p.now_ms
UNION ALL
SELECT 'mark', k.mark, '', NULL, NULL, NULL
FROM ${t.keys} k JOIN p ON k.key = p.key WHERE k.mark IS NOT NULL`;
}

/**
 * Reads the catch-up marks of many keys: $1 the keys (text[], encoded). One row: `marks`, the
 * mark of each key in array order (NULL for a key without one; a repeated key answers its mark
 * each time), and `now_ms`, the database's `now()`. One statement, one index lookup per key.
 */
export function readMarksSql(t: LockTables): string {
  return `SELECT ${NOW_MS} AS now_ms, coalesce((
  SELECT array_agg(k.mark ORDER BY q.ord)
  FROM unnest($1::text[]) WITH ORDINALITY AS q(key, ord)
  LEFT JOIN ${t.keys} k ON k.key = q.key
), '{}') AS marks`;
}

/** The row of {@link readMarksSql}: bigints arrive as strings (in the array too). */
export interface ReadMarksRow {
  now_ms: string;
  marks: (string | null)[];
}

/** A row of {@link inspectSql} (bigints arrive as strings). */
export interface InspectRow {
  kind: 'fire' | 'exclusive' | 'per_fire' | 'mark';
  fire_at: string;
  owner: string;
  outcome: 'won' | 'busy' | null;
  token: string | null;
  expires_at: string | null;
}

/**
 * A lease row returned by the renewal statements, with the database's `now()` (`now_ms`); the
 * lease columns are NULL when the lease was not renewed.
 */
export interface LeaseRow {
  fire_at: string | null;
  owner: string | null;
  token: string | null;
  expires_at: string | null;
  now_ms: string;
}

/** The names of the lock's statements. */
export type LockStatement =
  | 'claim'
  | 'claimMany'
  | 'extendMany'
  | 'releaseMany'
  | 'extend'
  | 'release'
  | 'withdraw'
  | 'inspect'
  | 'readMarks';

/** Every statement of the lock on tables `t`, by name. */
export function lockStatements(t: LockTables): Record<LockStatement, string> {
  return {
    claim: claimSql(t),
    claimMany: claimManySql(t),
    extendMany: extendManySql(t),
    releaseMany: releaseManySql(t),
    extend: extendSql(t),
    release: releaseSql(t),
    withdraw: withdrawSql(t),
    inspect: inspectSql(t),
    readMarks: readMarksSql(t),
  };
}
