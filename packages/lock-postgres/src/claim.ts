import type { ClaimRequest, ClaimResult } from '@fleetcron/core';
import type { LockTables } from './schema.js';
import { decodeText } from './text.js';

/** `now()` of the database as epoch ms: the clock that judges staleness and expiry. */
export const NOW_MS = 'floor(extract(epoch FROM now()) * 1000)::bigint';

/**
 * The claim statement: one round trip, one implicit transaction.
 *
 * Parameters: $1 key, $2 fireAt, $3 owner, $4 leaseMs, $5 exclusive, $6 windowMs.
 *
 * How it stays race-free in READ COMMITTED, where every CTE reads one snapshot taken when the
 * statement started:
 *
 * 1. `rec` looks for the fire's claim record in the snapshot. A record never changes once
 *    written, so when it is there the answer (lost, or a replay for the same owner) is final
 *    and nothing is written.
 * 2. When it is not there, the snapshot may be out of date: another claim of this fire may have
 *    committed since it was taken. `bump` therefore upserts the key's row (`INSERT ... ON
 *    CONFLICT DO UPDATE`), which locks it and serialises every new claim of the key. The update
 *    only happens `WHERE claim_seq` still equals the value in this statement's snapshot: every
 *    new claim increments `claim_seq` in the same transaction that writes its claim record, so
 *    an unchanged `claim_seq` proves that no claim of the key committed after the snapshot, and
 *    the snapshot's "no record" is true. If it changed, nothing is written and the statement
 *    answers `retry`; the client runs it again with a fresh snapshot (a few ms, only when
 *    claims of one key race).
 * 3. Under that lock, the busy check, the token increment and the new exclusive lease are
 *    computed from the locked, current row (the values `DO UPDATE` sees are the latest
 *    committed ones, not the snapshot's), so two claims can never both see the exclusive
 *    slot free, and tokens strictly increase.
 * 4. `record` writes the claim record and `per_fire` the per-fire lease (exclusive: false).
 * 5. `gc_claims` / `gc_leases` delete this key's records past `fireAt + windowMs` and its
 *    expired per-fire leases (`SKIP LOCKED`: a claim never waits for another's clean-up).
 */
export function claimSql(t: LockTables): string {
  return `WITH p AS (
  SELECT $1::text AS key, $2::bigint AS fire_at, $3::text AS owner, $4::bigint AS lease_ms,
         $5::boolean AS exclusive, $6::bigint AS window_ms, ${NOW_MS} AS now_ms
),
seen AS (
  SELECT k.claim_seq, k.x_fire_at, k.x_owner, k.x_token, k.x_expires_at
  FROM ${t.keys} k JOIN p ON k.key = p.key
),
rec AS (
  SELECT c.owner, c.outcome, c.token
  FROM ${t.claims} c JOIN p ON c.key = p.key AND c.fire_at = p.fire_at
  WHERE c.fire_at >= p.now_ms - p.window_ms
),
step AS (
  SELECT CASE
    WHEN EXISTS (SELECT 1 FROM rec) THEN 'existing'
    WHEN p.fire_at < p.now_ms - p.window_ms THEN 'stale'
    WHEN p.fire_at > p.now_ms + p.window_ms THEN 'early'
    ELSE 'new' END AS step
  FROM p
),
bump AS (
  INSERT INTO ${t.keys} AS k (key, claim_seq, last_token, x_fire_at, x_owner, x_token, x_expires_at)
  SELECT p.key, 1, 1,
         CASE WHEN p.exclusive THEN p.fire_at END,
         CASE WHEN p.exclusive THEN p.owner END,
         CASE WHEN p.exclusive THEN 1 END,
         CASE WHEN p.exclusive THEN p.now_ms + p.lease_ms END
  FROM p JOIN step ON step.step = 'new'
  ON CONFLICT (key) DO UPDATE SET
    (claim_seq, last_token, x_fire_at, x_owner, x_token, x_expires_at) = (
      SELECT k.claim_seq + 1,
             CASE WHEN d.busy THEN k.last_token ELSE k.last_token + 1 END,
             CASE WHEN d.take THEN p.fire_at ELSE k.x_fire_at END,
             CASE WHEN d.take THEN p.owner ELSE k.x_owner END,
             CASE WHEN d.take THEN k.last_token + 1 ELSE k.x_token END,
             CASE WHEN d.take THEN p.now_ms + p.lease_ms ELSE k.x_expires_at END
      FROM p CROSS JOIN LATERAL (
        SELECT p.exclusive AND coalesce(k.x_expires_at > p.now_ms, false) AS busy,
               p.exclusive AND NOT coalesce(k.x_expires_at > p.now_ms, false) AS take
      ) d
    )
  WHERE k.claim_seq = (SELECT claim_seq FROM seen)
  RETURNING k.last_token, k.x_fire_at, k.x_token
),
won AS (
  SELECT b.last_token AS token,
         NOT p.exclusive OR (b.x_fire_at = p.fire_at AND b.x_token = b.last_token) AS won
  FROM bump b CROSS JOIN p
),
record AS (
  INSERT INTO ${t.claims} (key, fire_at, owner, outcome, token)
  SELECT p.key, p.fire_at, p.owner,
         CASE WHEN w.won THEN 'won' ELSE 'busy' END,
         CASE WHEN w.won THEN w.token END
  FROM p CROSS JOIN won w
  ON CONFLICT (key, fire_at) DO NOTHING
  RETURNING 1
),
per_fire AS (
  INSERT INTO ${t.leases} (key, fire_at, owner, token, expires_at)
  SELECT p.key, p.fire_at, p.owner, w.token, p.now_ms + p.lease_ms
  FROM p CROSS JOIN won w
  WHERE NOT p.exclusive
  ON CONFLICT (key, fire_at) DO UPDATE
    SET owner = excluded.owner, token = excluded.token, expires_at = excluded.expires_at
  RETURNING 1
),
gc_claims AS (
  DELETE FROM ${t.claims}
  WHERE (key, fire_at) IN (
    SELECT c.key, c.fire_at FROM ${t.claims} c JOIN p ON c.key = p.key
    WHERE c.fire_at < p.now_ms - p.window_ms
    FOR UPDATE OF c SKIP LOCKED)
  RETURNING 1
),
gc_leases AS (
  DELETE FROM ${t.leases}
  WHERE (key, fire_at) IN (
    SELECT l.key, l.fire_at FROM ${t.leases} l JOIN p ON l.key = p.key
    WHERE l.expires_at <= p.now_ms
    FOR UPDATE OF l SKIP LOCKED)
  RETURNING 1
)
SELECT s.step, p.now_ms,
       r.owner AS rec_owner, r.outcome AS rec_outcome, r.token AS rec_token,
       w.won, w.token AS new_token, (SELECT count(*) FROM record) AS recorded,
       live.fire_at AS live_fire_at, live.owner AS live_owner, live.token AS live_token,
       live.expires_at AS live_expires_at, live.exclusive AS live_exclusive
FROM p
CROSS JOIN step s
LEFT JOIN rec r ON true
LEFT JOIN won w ON true
LEFT JOIN LATERAL (
  SELECT x.x_fire_at AS fire_at, x.x_owner AS owner, x.x_token AS token,
         x.x_expires_at AS expires_at, true AS exclusive
  FROM seen x WHERE x.x_token = r.token AND x.x_expires_at > p.now_ms
  UNION ALL
  SELECT l.fire_at, l.owner, l.token, l.expires_at, false
  FROM ${t.leases} l
  WHERE l.key = p.key AND l.fire_at = p.fire_at AND l.token = r.token AND l.expires_at > p.now_ms
  LIMIT 1
) live ON true`;
}

/** The row the claim statement returns (bigints arrive as strings). */
export interface ClaimRow {
  step: 'existing' | 'stale' | 'early' | 'new';
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

/**
 * Turns the statement's row into the contract's answer, or `retry` when the statement's snapshot
 * was out of date (see {@link claimSql}).
 */
export function claimResult(
  request: ClaimRequest,
  storedOwner: string,
  row: ClaimRow,
): ClaimResult | 'retry' {
  const { key, fireAt } = request;
  switch (row.step) {
    case 'stale':
    case 'early':
      return { status: 'lost', key, fireAt, reason: row.step };
    case 'existing': {
      if (row.rec_owner !== storedOwner) return { status: 'lost', key, fireAt, reason: 'claimed' };
      if (row.rec_outcome === 'busy') return { status: 'busy', key, fireAt };
      if (row.live_token === null) return { status: 'lost', key, fireAt, reason: 'claimed' };
      return {
        status: 'won',
        lease: {
          key,
          fireAt: Number(row.live_fire_at),
          owner: decodeText(row.live_owner ?? storedOwner),
          token: Number(row.live_token),
          expiresAt: Number(row.live_expires_at),
          exclusive: row.live_exclusive === true,
        },
      };
    }
    case 'new': {
      if (row.won === null) return 'retry';
      if (row.recorded !== '1') {
        // Impossible while rows of the keys table are never deleted (see postgresLockSchema).
        throw new Error(
          `claim of ${JSON.stringify(key)} at ${fireAt}: claim record already existed after the key row proved the snapshot current; were rows deleted from the keys table?`,
        );
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
