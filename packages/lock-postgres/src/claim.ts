import type { ClaimRequest, ClaimResult, Lease } from '@fleetcron/core';
import { decodeText } from '@fleetcron/postgres-shared';
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
 * {@link ClaimRow}. `waitMs` bounds the wait for the key's row lock (`lock_timeout`, local to the
 * claim's transaction) to the time the client still waits for the answer: a claim the client
 * has stopped waiting for cannot be granted the lock, and so cannot take effect, later.
 * All times are judged by `v_now`, the database's `now()` (the start of the claim's transaction),
 * taken once, and returned as `now_ms` with every answer (the fleet's clock). A fire with no
 * record yet that is more than `earlyMs` ahead of `v_now` is refused `early` (nothing written).
 *
 * Why it is race-free in READ COMMITTED: inside a function every statement takes a fresh
 * snapshot.
 *
 * 1. Fast path: read the fire's claim record. A record never changes once written, so when it
 *    is there the answer (lost, or a replay for the same owner) is final; nothing is locked or
 *    written.
 * 2. No record: lock the key's row in `_keys` (`SELECT ... FOR UPDATE`, inserting the row first
 *    when the key is new). That lock serialises every new claim of the key.
 * 3. Read the claim record again: this statement's snapshot is taken after the lock was granted,
 *    so a concurrent claim of the same fire that held the lock before us has committed and is
 *    visible. If it is there, answer as in 1 (no client-side re-run).
 * 4. Still none: a catch-up claim (`since` set) of a fire at or behind the key's `mark` is
 *    answered `behind_mark` (nothing written), with the owner's live lease of that fire when it
 *    is the mark's fire (a re-sent catch-up claim whose record was already collected). Otherwise decide from the locked, current row:
 *    busy (exclusive and a live exclusive
 *    lease), else token = last_token + 1 and the lease (the key's exclusive slot, or a per-fire
 *    row in `_leases`). Write the key row (bumping `claim_seq`, which older clients' single
 *    statement relies on, and moving `mark` to the newest recorded fire), the claim record and
 *    the lease.
 * 5. Delete this key's claim records past `fireAt + windowMs` and its expired per-fire leases
 *    (only claims holding the key's lock do this, so clean-ups never wait on each other).
 */
export function claimFunctionSql(t: LockTables): string {
  return `CREATE OR REPLACE FUNCTION ${t.claim}(
  p_key text, p_fire_at bigint, p_owner text, p_lease_ms bigint, p_exclusive boolean, p_window_ms bigint,
  p_wait_ms bigint, p_early_ms bigint, p_since bigint DEFAULT NULL
) RETURNS TABLE (
  step text, now_ms bigint, rec_owner text, rec_outcome text, rec_token bigint,
  won boolean, new_token bigint, recorded bigint,
  live_fire_at bigint, live_owner text, live_token bigint, live_expires_at bigint, live_exclusive boolean
) LANGUAGE plpgsql VOLATILE AS $fleetcron$
DECLARE
  v_now bigint := ${NOW_MS};
  v_rec record;
  v_last bigint;
  v_x_expires bigint;
  v_mark bigint;
  v_token bigint;
BEGIN
  now_ms := v_now;
  recorded := 0;
  IF p_fire_at < coalesce(p_since, v_now - p_window_ms) THEN
    step := 'stale';
    RETURN NEXT;
    RETURN;
  END IF;
  SELECT c.owner, c.outcome, c.token INTO v_rec
    FROM ${t.claims} c WHERE c.key = p_key AND c.fire_at = p_fire_at;
  IF NOT FOUND THEN
    IF p_fire_at > v_now + p_early_ms THEN
      step := 'early';
      RETURN NEXT;
      RETURN;
    END IF;
    PERFORM set_config('lock_timeout', greatest(p_wait_ms, 1)::text || 'ms', true);
    SELECT k.last_token, k.x_expires_at, k.mark INTO v_last, v_x_expires, v_mark
      FROM ${t.keys} k WHERE k.key = p_key FOR UPDATE;
    IF NOT FOUND THEN
      INSERT INTO ${t.keys} AS k (key, claim_seq, last_token) VALUES (p_key, 0, 0)
        ON CONFLICT (key) DO NOTHING;
      SELECT k.last_token, k.x_expires_at, k.mark INTO STRICT v_last, v_x_expires, v_mark
        FROM ${t.keys} k WHERE k.key = p_key FOR UPDATE;
    END IF;
    SELECT c.owner, c.outcome, c.token INTO v_rec
      FROM ${t.claims} c WHERE c.key = p_key AND c.fire_at = p_fire_at;
    IF NOT FOUND THEN
      IF p_since IS NOT NULL AND p_fire_at <= v_mark THEN
        step := 'behind_mark';
        IF p_fire_at = v_mark THEN
          -- A re-sent catch-up claim whose record is collected: the owner's live lease, if any.
          SELECT k.x_fire_at, k.x_owner, k.x_token, k.x_expires_at, true
            INTO live_fire_at, live_owner, live_token, live_expires_at, live_exclusive
            FROM ${t.keys} k WHERE k.key = p_key AND k.x_fire_at = p_fire_at
              AND k.x_owner = p_owner AND k.x_expires_at > v_now;
          IF NOT FOUND THEN
            SELECT l.fire_at, l.owner, l.token, l.expires_at, false
              INTO live_fire_at, live_owner, live_token, live_expires_at, live_exclusive
              FROM ${t.leases} l WHERE l.key = p_key AND l.fire_at = p_fire_at
                AND l.owner = p_owner AND l.expires_at > v_now;
          END IF;
        END IF;
        RETURN NEXT;
        RETURN;
      END IF;
      step := 'new';
      IF p_exclusive AND coalesce(v_x_expires > v_now, false) THEN
        UPDATE ${t.keys} k SET claim_seq = k.claim_seq + 1, mark = greatest(k.mark, p_fire_at)
        WHERE k.key = p_key;
        INSERT INTO ${t.claims} (key, fire_at, owner, outcome, token)
          VALUES (p_key, p_fire_at, p_owner, 'busy', NULL);
        won := false;
      ELSE
        v_token := v_last + 1;
        IF p_exclusive THEN
          UPDATE ${t.keys} k SET claim_seq = k.claim_seq + 1, last_token = v_token,
            mark = greatest(k.mark, p_fire_at), x_fire_at = p_fire_at, x_owner = p_owner, x_token = v_token,
            x_expires_at = v_now + p_lease_ms
          WHERE k.key = p_key;
        ELSE
          UPDATE ${t.keys} k SET claim_seq = k.claim_seq + 1, last_token = v_token,
            mark = greatest(k.mark, p_fire_at)
          WHERE k.key = p_key;
          INSERT INTO ${t.leases} AS l (key, fire_at, owner, token, expires_at)
            VALUES (p_key, p_fire_at, p_owner, v_token, v_now + p_lease_ms)
            ON CONFLICT (key, fire_at) DO UPDATE
              SET owner = excluded.owner, token = excluded.token, expires_at = excluded.expires_at;
        END IF;
        INSERT INTO ${t.claims} (key, fire_at, owner, outcome, token)
          VALUES (p_key, p_fire_at, p_owner, 'won', v_token);
        won := true;
        new_token := v_token;
      END IF;
      recorded := 1;
      DELETE FROM ${t.claims} c WHERE c.key = p_key AND c.fire_at < v_now - p_window_ms;
      DELETE FROM ${t.leases} l WHERE l.key = p_key AND l.expires_at <= v_now;
      RETURN NEXT;
      RETURN;
    END IF;
  END IF;
  step := 'existing';
  rec_owner := v_rec.owner;
  rec_outcome := v_rec.outcome;
  rec_token := v_rec.token;
  IF v_rec.outcome = 'won' AND v_rec.owner = p_owner THEN
    SELECT k.x_fire_at, k.x_owner, k.x_token, k.x_expires_at, true
      INTO live_fire_at, live_owner, live_token, live_expires_at, live_exclusive
      FROM ${t.keys} k WHERE k.key = p_key AND k.x_token = v_rec.token AND k.x_expires_at > v_now;
    IF NOT FOUND THEN
      SELECT l.fire_at, l.owner, l.token, l.expires_at, false
        INTO live_fire_at, live_owner, live_token, live_expires_at, live_exclusive
        FROM ${t.leases} l WHERE l.key = p_key AND l.fire_at = p_fire_at
          AND l.token = v_rec.token AND l.expires_at > v_now;
    END IF;
  END IF;
  RETURN NEXT;
END
$fleetcron$`;
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

/** The row the claim function returns (bigints arrive as strings). */
export interface ClaimRow {
  step: 'existing' | 'stale' | 'early' | 'behind_mark' | 'new';
  now_ms: string;
  rec_owner: string | null;
  rec_outcome: 'won' | 'busy' | null;
  rec_token: string | null;
  won: boolean | null;
  new_token: string | null;
  recorded: string;
  live_fire_at: string | null;
  live_owner: string | null;
  live_token: string | null;
  live_expires_at: string | null;
  live_exclusive: boolean | null;
}

/** Turns the claim function's row into the contract's answer. */
export function claimResult(
  request: ClaimRequest,
  storedOwner: string,
  row: ClaimRow,
): ClaimResult {
  return { ...decide(request, storedOwner, row), backendTime: Number(row.now_ms) };
}

function decide(request: ClaimRequest, storedOwner: string, row: ClaimRow): ClaimResult {
  const { key, fireAt } = request;
  switch (row.step) {
    case 'behind_mark':
      if (row.live_token !== null)
        return { status: 'won', lease: liveLease(key, storedOwner, row) };
      return { status: 'lost', key, fireAt, reason: row.step };
    case 'stale':
    case 'early':
      return { status: 'lost', key, fireAt, reason: row.step };
    case 'existing': {
      if (row.rec_owner !== storedOwner) return { status: 'lost', key, fireAt, reason: 'claimed' };
      if (row.rec_outcome === 'busy') return { status: 'busy', key, fireAt };
      if (row.live_token === null) return { status: 'lost', key, fireAt, reason: 'claimed' };
      return { status: 'won', lease: liveLease(key, storedOwner, row) };
    }
    case 'new': {
      if (row.won === null || row.recorded !== '1') {
        // Impossible: the function writes the record whenever it answers 'new'.
        throw new Error(`claim of ${JSON.stringify(key)} at ${fireAt}: no claim record written`);
      }
      if (!row.won) return { status: 'busy', key, fireAt };
      return {
        status: 'won',
        lease: {
          key,
          fireAt,
          owner: request.owner,
          token: Number(row.new_token),
          expiresAt: Number(row.now_ms) + Math.ceil(request.leaseMs),
          exclusive: request.exclusive,
        },
      };
    }
  }
}

/** The live lease a replayed claim answers with (the `live_*` columns of the row). */
function liveLease(key: string, storedOwner: string, row: ClaimRow): Lease {
  return {
    key,
    fireAt: Number(row.live_fire_at),
    owner: decodeText(row.live_owner ?? storedOwner),
    token: Number(row.live_token),
    expiresAt: Number(row.live_expires_at),
    exclusive: row.live_exclusive === true,
  };
}
