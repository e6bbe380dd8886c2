import type { Lease } from '@fleetcron/core';
import { encodeText } from '@fleetcron/postgres-shared';
import { NOW_MS } from './claim.js';
import type { LockTables } from './schema.js';

/**
 * The batched lease statements: many renewals, or many releases, in one statement (one round
 * trip, one implicit transaction), each lease judged exactly as the single statement judges it.
 * Exclusive leases (in the keys' rows) are locked in key order, the order every claim and batch
 * claim takes them, so a batch never deadlocks with a batch claim; per-fire leases (in claim
 * records) are matched by key, fire and token and only while live.
 *
 * Parameters of both: $1 keys, $2 fireAts, $3 tokens, $4 exclusive flags (one element per lease);
 * extend adds $5 leaseMs. Each returns one row per lease it renewed or released: `ord`, the
 * lease's 1-based position.
 */

/** Extends many leases; returns `ord` and the renewed lease's columns for each one renewed. */
export function extendManySql(t: LockTables): string {
  return `WITH r AS (
  SELECT * FROM unnest($1::text[], $2::bigint[], $3::bigint[], $4::boolean[], $5::bigint[])
    WITH ORDINALITY AS r(key, fire_at, token, excl, lease_ms, ord)
),
n AS (SELECT ${NOW_MS} AS now_ms),
cur AS (
  SELECT k.key, r.ord, r.lease_ms FROM ${t.keys} k JOIN r ON k.key = r.key AND k.x_token = r.token
  WHERE r.excl AND k.x_expires_at > (SELECT now_ms FROM n)
  ORDER BY k.key FOR UPDATE OF k
), x AS (
  UPDATE ${t.keys} k SET x_expires_at = n.now_ms + cur.lease_ms FROM cur, n WHERE k.key = cur.key
  RETURNING cur.ord, k.x_fire_at AS fire_at, k.x_owner AS owner, k.x_token AS token,
    k.x_expires_at AS expires_at, n.now_ms
), p AS (
  UPDATE ${t.claims} c SET expires_at = n.now_ms + r.lease_ms FROM r, n
  WHERE NOT r.excl AND c.key = r.key AND c.fire_at = r.fire_at AND c.token = r.token
    AND c.expires_at > n.now_ms
  RETURNING r.ord, c.fire_at, c.owner, c.token, c.expires_at, n.now_ms
)
SELECT * FROM x UNION ALL SELECT * FROM p`;
}

/** Releases many leases; returns `ord` and `live` for each one that was held. */
export function releaseManySql(t: LockTables): string {
  return `WITH r AS (
  SELECT * FROM unnest($1::text[], $2::bigint[], $3::bigint[], $4::boolean[])
    WITH ORDINALITY AS r(key, fire_at, token, excl, ord)
),
n AS (SELECT ${NOW_MS} AS now_ms),
cur AS (
  SELECT k.key, r.ord, k.x_expires_at FROM ${t.keys} k JOIN r ON k.key = r.key AND k.x_token = r.token
  WHERE r.excl
  ORDER BY k.key FOR UPDATE OF k
), x AS (
  UPDATE ${t.keys} k SET x_fire_at = NULL, x_owner = NULL, x_token = NULL, x_expires_at = NULL
  FROM cur WHERE k.key = cur.key
  RETURNING cur.ord, cur.x_expires_at > (SELECT now_ms FROM n) AS live
), p AS (
  UPDATE ${t.claims} c SET expires_at = NULL FROM r, n
  WHERE NOT r.excl AND c.key = r.key AND c.fire_at = r.fire_at AND c.token = r.token
    AND c.expires_at > n.now_ms
  RETURNING r.ord, true AS live
)
SELECT * FROM x UNION ALL SELECT * FROM p`;
}

/** A row of {@link releaseManySql}. */
export interface ReleaseManyRow {
  ord: string;
  live: boolean;
}

/** A row of {@link extendManySql} (bigints arrive as strings). */
export interface ExtendManyRow {
  ord: string;
  fire_at: string;
  owner: string;
  token: string;
  expires_at: string;
  now_ms: string;
}

/** The per-lease arrays ($1 to $4) of the batched lease statements. */
export function leaseArrays(leases: readonly Lease[]): unknown[][] {
  return [
    leases.map((lease) => encodeText(lease.key)),
    leases.map((lease) => lease.fireAt),
    leases.map((lease) => lease.token),
    leases.map((lease) => lease.exclusive),
  ];
}

/**
 * Whether two of `leases` are the same lease (same key, slot and token). A batch statement
 * touches each row once, so such a batch is answered lease by lease instead.
 */
export function hasRepeatedLease(leases: readonly Lease[]): boolean {
  const seen = new Set<string>();
  for (const lease of leases) {
    const id = JSON.stringify([lease.key, lease.exclusive ? null : lease.fireAt, lease.token]);
    if (seen.has(id)) return true;
    seen.add(id);
  }
  return false;
}
