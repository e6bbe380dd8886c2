import type { ClaimRequest } from '@fleetcron/core';
import { encodeText } from '@fleetcron/postgres-shared';
import { CLAIM_VARIABLES, type ClaimRow, claimBodySql, NOW_MS } from './claim.js';
import type { LockTables } from './schema.js';

/**
 * The batch claim function `migrate()` creates (`<schema>.<table>_claim_many`), called by
 * {@link claimManySql}: one call claims many fires in one round trip and one transaction.
 *
 * Parameters: arrays of keys, fireAts, owners, leaseMs, exclusive flags and catch-up `since`
 * values (`NULL` for ordinary claims), one element per request, then windowMs, waitMs and
 * earlyMs. Returns one row per request: `ord` (the request's 1-based position) and the columns of
 * the claim function ({@link ClaimRow}).
 *
 * Each request is answered by the claim function's own block ({@link claimBodySql}, run once per
 * request in a loop), so a batch answers exactly as the same claims sent one by one at the same
 * `now()` would. The requests are applied
 * sorted by key, each key's requests in array order: requests of one key see each other in the
 * order they were given, and every batch (and every single claim) takes the keys' row locks in
 * the same order, so overlapping batches from different instances queue instead of deadlocking.
 * The row locks are held until the batch commits. `waitMs` bounds the whole batch's waits for row
 * locks: each request may wait only for what is left of it (`lock_timeout`), and a batch past it
 * fails as a whole (the client then answers `BackendUnavailableError`).
 */
export function claimManyFunctionSql(t: LockTables): string {
  const waitLeft = 'ceil(extract(epoch FROM v_until - clock_timestamp()) * 1000)::bigint';
  return `CREATE OR REPLACE FUNCTION ${t.claimMany}(
  p_keys text[], p_fire_ats bigint[], p_owners text[], p_leases_ms bigint[], p_exclusives boolean[],
  p_sinces bigint[], p_window_ms bigint, p_batch_wait_ms bigint, p_early_ms bigint
) RETURNS TABLE (
  ord bigint, a_status text, a_reason text, a_token bigint, a_expires_at bigint, a_exclusive boolean,
  a_now_ms bigint
) LANGUAGE plpgsql VOLATILE SET plan_cache_mode = force_generic_plan AS $fleetcron$
DECLARE
  v_until timestamptz := clock_timestamp() + p_batch_wait_ms * interval '1 millisecond';
  v_now bigint := ${NOW_MS};
  r record;
  p_key text;
  p_fire_at bigint;
  p_owner text;
  p_lease_ms bigint;
  p_exclusive boolean;
  p_since bigint;
${CLAIM_VARIABLES}
BEGIN
  FOR r IN
    SELECT u.key, u.fire_at, u.owner, u.lease_ms, u.excl, u.since, u.i
    FROM unnest(p_keys, p_fire_ats, p_owners, p_leases_ms, p_exclusives, p_sinces) WITH ORDINALITY
      AS u(key, fire_at, owner, lease_ms, excl, since, i)
    ORDER BY u.key COLLATE "C", u.i
  LOOP
    p_key := r.key;
    p_fire_at := r.fire_at;
    p_owner := r.owner;
    p_lease_ms := r.lease_ms;
    p_exclusive := r.excl;
    p_since := r.since;
    ord := r.i;
    a_status := NULL;
    a_reason := NULL;
    a_token := NULL;
    a_expires_at := NULL;
    a_exclusive := NULL;
    a_now_ms := v_now;
    v_token := NULL;
${claimBodySql(t, waitLeft)}
    RETURN NEXT;
  END LOOP;
END
$fleetcron$`;
}

/**
 * The batch claim statement: one call of the batch claim function (see
 * {@link claimManyFunctionSql}). Parameters: $1 keys, $2 fireAts, $3 owners, $4 leaseMs,
 * $5 exclusive flags, $6 catch-up `since` values, $7 windowMs, $8 waitMs, $9 earlyMs.
 */
export function claimManySql(t: LockTables): string {
  return `SELECT * FROM ${t.claimMany}($1::text[], $2::bigint[], $3::text[], $4::bigint[], $5::boolean[], $6::bigint[], $7::bigint, $8::bigint, $9::bigint)`;
}

/** A row of the batch claim function: the claim function's answer to request number `ord`. */
export interface ClaimManyRow extends ClaimRow {
  ord: string;
}

/** The per-request arrays of {@link claimManySql} ($1 to $6) for `requests`. */
export function claimManyArrays(requests: readonly ClaimRequest[]): unknown[][] {
  const keys: string[] = [];
  const fireAts: number[] = [];
  const owners: string[] = [];
  const leaseMs: number[] = [];
  const exclusive: boolean[] = [];
  const since: (number | null)[] = [];
  for (const request of requests) {
    keys.push(encodeText(request.key));
    fireAts.push(request.fireAt);
    owners.push(encodeText(request.owner));
    leaseMs.push(Math.ceil(request.leaseMs));
    exclusive.push(request.exclusive);
    since.push(request.catchUp?.since ?? null);
  }
  return [keys, fireAts, owners, leaseMs, exclusive, since];
}
