import type { ClaimRequest, ClaimResult, LostReason } from '@fleetcron/core';
import type { LockTables } from './schema.js';

/** `now()` of the database as epoch ms: the clock that judges staleness and expiry. */
export const NOW_MS = 'floor(extract(epoch FROM now()) * 1000)::bigint';

/**
 * The claim function `migrate()` creates (`<schema>.<table>_claim`), called by {@link claimSql}.
 * PL/pgSQL caches the plans of its statements per connection on its own, so a claim is planned
 * once per connection with no session state the client must manage (transaction poolers work).
 *
 * Parameters: key, fireAt, owner, leaseMs, exclusive, windowMs, waitMs, earlyMs, since (the
 * oldest fire a catch-up claim may take; `NULL`, the default, for an ordinary claim). Returns one
 * {@link ClaimRow}: the answer, decided on the server. `waitMs` bounds the wait for the key's
 * row lock (`lock_timeout`, local to the claim's transaction) to the time the client still waits
 * for the answer: a claim the client has stopped waiting for cannot be granted the lock, and so
 * cannot take effect, later. All times are judged by `a_now_ms`, the database's `now()` (the
 * start of the claim's transaction), taken once and returned with every answer.
 *
 * Why it is race-free in READ COMMITTED: inside a function every statement takes a fresh
 * snapshot.
 *
 * 1. Fast path: read the fire's claim record. A record never changes once written (only its
 *    per-fire lease end does), so when it is there the answer (lost, or a replay for the same
 *    owner) is final; nothing is locked or written.
 * 2. No record, and the fire more than `earlyMs` ahead: `early`, nothing written.
 * 3. Lock the key's row in `_keys` (`SELECT ... FOR UPDATE`, inserting the row first when the
 *    key is new). That lock serialises every new claim of the key.
 * 4. A catch-up claim re-reads the record (this statement's snapshot is taken after the lock was
 *    granted) and answers a fire at or behind the key's `mark` `behind_mark` (nothing written),
 *    with the owner's live exclusive lease of that fire when it is the mark's fire.
 * 5. Decide from the locked, current row: busy (exclusive and a live exclusive lease), else
 *    token = last_token + 1. Insert the claim record (with the per-fire lease end for
 *    `exclusive: false`) `ON CONFLICT DO NOTHING`: a conflict means a claim of the same fire
 *    committed after step 1, and its record is the answer (read again, as in 1). Otherwise write
 *    the key row (token counter, mark, exclusive lease) in the same transaction.
 * 6. Delete this key's claim records past `fireAt + windowMs` that hold no live per-fire lease
 *    (only claims holding the key's lock do this, so clean-ups never wait on each other).
 */
export function claimFunctionSql(t: LockTables): string {
  return `CREATE OR REPLACE FUNCTION ${t.claim}(
  p_key text, p_fire_at bigint, p_owner text, p_lease_ms bigint, p_exclusive boolean, p_window_ms bigint,
  p_wait_ms bigint, p_early_ms bigint, p_since bigint DEFAULT NULL,
  OUT a_status text, OUT a_reason text, OUT a_token bigint, OUT a_expires_at bigint,
  OUT a_exclusive boolean, OUT a_now_ms bigint
) LANGUAGE plpgsql VOLATILE SET plan_cache_mode = force_generic_plan AS $fleetcron$
DECLARE
${CLAIM_VARIABLES}
BEGIN
  a_now_ms := ${NOW_MS};
${claimBodySql(t, 'p_wait_ms')}
END
$fleetcron$`;
}

/**
 * The local variables {@link claimBodySql} uses (besides the claim's `p_*` inputs and `a_*`
 * outputs). `v_token` must be NULL when the body starts.
 */
export const CLAIM_VARIABLES = `  v_rec record;
  v_found boolean;
  v_key record;
  v_token bigint;`;

/**
 * The claim itself, as a PL/pgSQL block shared by the claim function and the batch claim
 * function (which runs it once per request, so both answer alike by construction). Reads the
 * request from `p_key`, `p_fire_at`, `p_owner`, `p_lease_ms`, `p_exclusive`, `p_window_ms`,
 * `p_early_ms`, `p_since` and `a_now_ms` (the database's `now()`), and writes the answer to the
 * `a_*` variables; `waitMs` is the expression of the longest row-lock wait. The block is labelled
 * `claim_item`: an answer leaves it with `EXIT claim_item`.
 */
export function claimBodySql(t: LockTables, waitMs: string): string {
  return `  <<claim_item>>
  BEGIN
    IF p_fire_at < coalesce(p_since, a_now_ms - p_window_ms) THEN
      a_status := 'lost';
      a_reason := 'stale';
      EXIT claim_item;
    END IF;
    SELECT c.owner, c.outcome, c.token, c.expires_at INTO v_rec
      FROM ${t.claims} c WHERE c.key = p_key AND c.fire_at = p_fire_at;
    v_found := FOUND;
    IF NOT v_found THEN
      IF p_fire_at > a_now_ms + p_early_ms THEN
        a_status := 'lost';
        a_reason := 'early';
        EXIT claim_item;
      END IF;
      PERFORM set_config('lock_timeout', greatest(${waitMs}, 1)::text || 'ms', true);
      SELECT k.last_token, k.mark, k.x_fire_at, k.x_owner, k.x_token, k.x_expires_at INTO v_key
        FROM ${t.keys} k WHERE k.key = p_key FOR UPDATE;
      IF NOT FOUND THEN
        INSERT INTO ${t.keys} AS k (key, last_token) VALUES (p_key, 0) ON CONFLICT (key) DO NOTHING;
        SELECT k.last_token, k.mark, k.x_fire_at, k.x_owner, k.x_token, k.x_expires_at INTO STRICT v_key
          FROM ${t.keys} k WHERE k.key = p_key FOR UPDATE;
      END IF;
      IF p_since IS NOT NULL THEN
        SELECT c.owner, c.outcome, c.token, c.expires_at INTO v_rec
          FROM ${t.claims} c WHERE c.key = p_key AND c.fire_at = p_fire_at;
        v_found := FOUND;
        IF NOT v_found AND p_fire_at <= v_key.mark THEN
          a_status := 'lost';
          a_reason := 'behind_mark';
          -- A re-sent catch-up claim whose record is collected: the owner's live exclusive lease.
          -- (A live per-fire lease keeps its record, so step 1 answered that one.)
          IF p_fire_at = v_key.mark AND v_key.x_fire_at = p_fire_at AND v_key.x_owner = p_owner
              AND v_key.x_expires_at > a_now_ms THEN
            a_status := 'won';
            a_reason := NULL;
            a_token := v_key.x_token;
            a_expires_at := v_key.x_expires_at;
            a_exclusive := true;
          END IF;
          EXIT claim_item;
        END IF;
      END IF;
    END IF;
    IF NOT v_found THEN
      IF NOT (p_exclusive AND coalesce(v_key.x_expires_at > a_now_ms, false)) THEN
        v_token := v_key.last_token + 1;
      END IF;
      INSERT INTO ${t.claims} AS c (key, fire_at, owner, outcome, token, expires_at)
        VALUES (p_key, p_fire_at, p_owner, CASE WHEN v_token IS NULL THEN 'busy' ELSE 'won' END, v_token,
          CASE WHEN v_token IS NOT NULL AND NOT p_exclusive THEN a_now_ms + p_lease_ms END)
        ON CONFLICT (key, fire_at) DO NOTHING;
      IF FOUND THEN
        IF v_token IS NULL THEN
          UPDATE ${t.keys} k SET mark = greatest(k.mark, p_fire_at) WHERE k.key = p_key;
          a_status := 'busy';
        ELSE
          IF p_exclusive THEN
            UPDATE ${t.keys} k SET last_token = v_token, mark = greatest(k.mark, p_fire_at),
              x_fire_at = p_fire_at, x_owner = p_owner, x_token = v_token, x_expires_at = a_now_ms + p_lease_ms
            WHERE k.key = p_key;
          ELSE
            UPDATE ${t.keys} k SET last_token = v_token, mark = greatest(k.mark, p_fire_at)
            WHERE k.key = p_key;
          END IF;
          a_status := 'won';
          a_token := v_token;
          a_expires_at := a_now_ms + p_lease_ms;
          a_exclusive := p_exclusive;
        END IF;
        DELETE FROM ${t.claims} c WHERE c.key = p_key AND c.fire_at < a_now_ms - p_window_ms
          AND (c.expires_at IS NULL OR c.expires_at <= a_now_ms);
        EXIT claim_item;
      END IF;
      -- A claim of this fire committed after step 1: its record is the answer.
      SELECT c.owner, c.outcome, c.token, c.expires_at INTO v_rec
        FROM ${t.claims} c WHERE c.key = p_key AND c.fire_at = p_fire_at;
      IF NOT FOUND THEN
        a_status := 'lost'; -- ... and was withdrawn meanwhile: another owner's claim
        a_reason := 'claimed';
        EXIT claim_item;
      END IF;
    END IF;
    -- The fire's record: lost to another owner, or a replay for the same owner.
    IF v_rec.owner <> p_owner THEN
      a_status := 'lost';
      a_reason := 'claimed';
    ELSIF v_rec.outcome = 'busy' THEN
      a_status := 'busy';
    ELSIF v_rec.expires_at > a_now_ms THEN
      a_status := 'won';
      a_token := v_rec.token;
      a_expires_at := v_rec.expires_at;
      a_exclusive := false;
    ELSE
      SELECT k.x_expires_at INTO a_expires_at FROM ${t.keys} k
        WHERE k.key = p_key AND k.x_token = v_rec.token AND k.x_expires_at > a_now_ms;
      IF FOUND THEN
        a_status := 'won';
        a_token := v_rec.token;
        a_exclusive := true;
      ELSE
        a_status := 'lost';
        a_reason := 'claimed';
      END IF;
    END IF;
  END;`;
}

/**
 * The claim statement: one call of the claim function (see {@link claimFunctionSql}), one round
 * trip, one implicit transaction. Parameters: $1 key, $2 fireAt, $3 owner, $4 leaseMs,
 * $5 exclusive, $6 windowMs, $7 waitMs (longest wait for the key's row lock), $8 earlyMs (the
 * early tolerance), $9 since (catch-up claims; `NULL` otherwise).
 */
export function claimSql(t: LockTables): string {
  return `SELECT * FROM ${t.claim}($1::text, $2::bigint, $3::text, $4::bigint, $5::boolean, $6::bigint, $7::bigint, $8::bigint, $9::bigint)`;
}

/** The answer the claim function returns (bigints arrive as strings). */
export interface ClaimRow {
  a_status: 'won' | 'busy' | 'lost';
  a_reason: LostReason | null;
  a_token: string | null;
  a_expires_at: string | null;
  a_exclusive: boolean | null;
  a_now_ms: string;
}

/** Turns the claim function's row into the contract's answer to `request`. */
export function claimResult(request: ClaimRequest, row: ClaimRow): ClaimResult {
  const { key, fireAt } = request;
  const backendTime = Number(row.a_now_ms);
  switch (row.a_status) {
    case 'won':
      return {
        status: 'won',
        lease: {
          key,
          fireAt,
          owner: request.owner,
          token: Number(row.a_token),
          expiresAt: Number(row.a_expires_at),
          exclusive: row.a_exclusive === true,
        },
        backendTime,
      };
    case 'busy':
      return { status: 'busy', key, fireAt, backendTime };
    default:
      return { status: 'lost', key, fireAt, reason: row.a_reason ?? 'claimed', backendTime };
  }
}
