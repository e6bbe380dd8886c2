import type { ClaimRequest } from '@fleetcron/core';
import { encodeText } from '@fleetcron/postgres-shared';
import { CLAIM_VARIABLES, type ClaimRow, claimBodySql, NOW_MS } from './claim.js';
import {
  classifySql,
  decideSql,
  lateRecordSql,
  preLockSql,
  waitFirstSql,
} from './claim-many-set.js';
import type { LockTables } from './schema.js';

/**
 * The batch claim function `migrate()` creates (`<schema>.<table>_claim_many`), called by
 * {@link claimManySql}: one call claims many fires in one round trip and one transaction.
 *
 * Parameters: arrays of keys, fireAts, owners, leaseMs, exclusive flags and catch-up `since`
 * values (`NULL` for ordinary claims), one element per request, then windowMs, waitMs and
 * earlyMs. Returns one row per request: `ord` (the request's 1-based position) and the columns of
 * the claim function ({@link ClaimRow}), in no particular order.
 *
 * Every request is decided by the rules of the claim function's block ({@link claimBodySql}),
 * all judged by one `now()`, so a batch answers exactly as the same claims sent one by one at
 * that `now()` would. Two paths:
 *
 * - **Set-based** (every key once, no catch-up claim: what the scheduler sends): one statement
 *   answers every request that needs no lock (stale, early, or the fire's record exists: lost
 *   or a replay), without locking anything; the others lock their keys' rows (in key order) and
 *   are decided, recorded and written by one more statement (see `claim-many-set.ts`).
 * - **Per request** (a key named twice, or a catch-up claim): the keys that may need a lock are
 *   locked first by the same protocol, then the claim block runs once per request, sorted by
 *   key and each key's requests in array order, so requests of one key see each other in the
 *   order they were given.
 *
 * Both paths take row locks only by that protocol (missing key rows inserted in key order, then
 * every row locked in key order), so overlapping batches from different instances queue instead
 * of deadlocking. The row locks are held until the batch commits. `waitMs` bounds the whole
 * batch's waits for row locks (`lock_timeout`, set to what is left of it before each step), and
 * a batch past it fails as a whole (the client then answers `BackendUnavailableError`).
 */
export function claimManyFunctionSql(t: LockTables): string {
  const waitLeft = 'ceil(extract(epoch FROM v_until - clock_timestamp()) * 1000)::bigint';
  const answers = (p: string) =>
    `RETURN QUERY SELECT x.i, x.s, x.r, x.tk, x.ex, x.xc, v_now
    FROM unnest(${p}_i, ${p}_status, ${p}_reason, ${p}_token, ${p}_expires, ${p}_excl) AS x(i, s, r, tk, ex, xc);`;
  return `CREATE OR REPLACE FUNCTION ${t.claimMany}(
  p_keys text[], p_fire_ats bigint[], p_owners text[], p_leases_ms bigint[], p_exclusives boolean[],
  p_sinces bigint[], p_window_ms bigint, p_batch_wait_ms bigint, p_early_ms bigint
) RETURNS TABLE (
  ord bigint, a_status text, a_reason text, a_token bigint, a_expires_at bigint, a_exclusive boolean,
  a_now_ms bigint
) LANGUAGE plpgsql VOLATILE SET plan_cache_mode = force_generic_plan SET enable_seqscan = off
AS $fleetcron$
DECLARE
  v_until timestamptz := clock_timestamp() + p_batch_wait_ms * interval '1 millisecond';
  v_now bigint := ${NOW_MS};
  v_simple boolean;
  v_count bigint;
  v_first text;
  t_key text[]; t_fire bigint[]; t_owner text[]; t_lease bigint[]; t_excl boolean[]; t_i bigint[];
  l_key text[]; l_last bigint[]; l_xexp bigint[];
  n_i bigint[]; n_status text[]; n_reason text[]; n_token bigint[]; n_expires bigint[]; n_excl boolean[];
  w_i bigint[]; w_status text[]; w_reason text[]; w_token bigint[]; w_expires bigint[]; w_excl boolean[];
  o_i bigint[]; o_status text[]; o_reason text[]; o_token bigint[]; o_expires bigint[]; o_excl boolean[];
  m_i bigint[]; m_status text[]; m_reason text[]; m_token bigint[]; m_expires bigint[]; m_excl boolean[];
  r record;
  p_key text;
  p_fire_at bigint;
  p_owner text;
  p_lease_ms bigint;
  p_exclusive boolean;
  p_since bigint;
${CLAIM_VARIABLES}
BEGIN
  ${classifySql(t)};
  IF v_simple THEN
    ${answers('n')}
    IF t_key IS NULL THEN
      RETURN;
    END IF;
    ${preLockSql(t, 't_key', waitLeft)}
    ${waitFirstSql(t)};
    ${answers('o')}
    IF t_key IS NULL THEN
      RETURN;
    END IF;
    ${decideSql(t)};
    ${answers('w')}
    IF v_count < cardinality(t_i) THEN
      ${lateRecordSql(t)};
      ${answers('m')}
    END IF;
    RETURN;
  END IF;
  SELECT array_agg(DISTINCT u.key COLLATE "C" ORDER BY u.key COLLATE "C") INTO t_key
    FROM unnest(p_keys, p_fire_ats, p_sinces) AS u(key, fire_at, since)
    WHERE u.fire_at >= coalesce(u.since, v_now - p_window_ms) AND u.fire_at <= v_now + p_early_ms;
  IF t_key IS NOT NULL THEN
    ${preLockSql(t, 't_key', waitLeft)}
    PERFORM 1 FROM ${t.keys} k WHERE k.key = ANY (t_key) ORDER BY k.key FOR UPDATE;
  END IF;
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
 *
 * Returns one row ({@link ClaimManyReply}): the answers packed in one text value, `;` between
 * answers and `,` between the fields of one (position, first letter of the status, lost reason,
 * token, lease end, `t` for an exclusive lease; empty when NULL), and the database's `now()`.
 * One value instead of a row of seven columns per answer: about half the client's work per
 * answer (see the README, "Where a claim's time goes"). Parsed by `parseClaimManyReply`.
 */
export function claimManySql(t: LockTables): string {
  return `SELECT string_agg(concat(r.ord, ',', left(r.a_status, 1), ',', r.a_reason, ',', r.a_token, ',',
    r.a_expires_at, ',', CASE WHEN r.a_exclusive THEN 't' END), ';') AS answers, max(r.a_now_ms) AS now_ms
  FROM ${t.claimMany}($1::text[], $2::bigint[], $3::text[], $4::bigint[], $5::boolean[], $6::bigint[], $7::bigint, $8::bigint, $9::bigint) AS r`;
}

/** The row of {@link claimManySql} (`now_ms` is a bigint, so a string). */
export interface ClaimManyReply {
  answers: string | null;
  now_ms: string | null;
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
