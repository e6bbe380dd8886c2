import type { ClaimRequest, ClaimResult } from '@fleetcron/core';
import { decodeText } from '@fleetcron/postgres-shared';
import type { LockTables } from './schema.js';

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
  const now = NOW_MS;
  return `WITH s AS (
  SELECT ${now} AS now_ms, k.claim_seq, k.x_fire_at, k.x_owner, k.x_token, k.x_expires_at,
         c.owner AS rec_owner, c.outcome AS rec_outcome, c.token AS rec_token,
         CASE
           WHEN $2::bigint < ${now} - $6::bigint THEN 'stale'
           WHEN c.owner IS NOT NULL THEN 'existing'
           WHEN $2::bigint > ${now} + $6::bigint THEN 'early'
           ELSE 'new'
         END AS step
  FROM (VALUES (1)) AS one (x)
  LEFT JOIN ${t.keys} k ON k.key = $1::text
  LEFT JOIN ${t.claims} c ON c.key = $1::text AND c.fire_at = $2::bigint
),
bump AS (
  INSERT INTO ${t.keys} AS k (key, claim_seq, last_token, x_fire_at, x_owner, x_token, x_expires_at)
  SELECT $1::text, 1, 1,
         CASE WHEN $5::boolean THEN $2::bigint END,
         CASE WHEN $5::boolean THEN $3::text END,
         CASE WHEN $5::boolean THEN 1 END,
         CASE WHEN $5::boolean THEN ${now} + $4::bigint END
  FROM s WHERE s.step = 'new'
  ON CONFLICT (key) DO UPDATE SET
    (claim_seq, last_token, x_fire_at, x_owner, x_token, x_expires_at) = (
      SELECT k.claim_seq + 1,
             k.last_token + CASE WHEN d.busy THEN 0 ELSE 1 END,
             CASE WHEN d.take THEN $2::bigint ELSE k.x_fire_at END,
             CASE WHEN d.take THEN $3::text ELSE k.x_owner END,
             CASE WHEN d.take THEN k.last_token + 1 ELSE k.x_token END,
             CASE WHEN d.take THEN ${now} + $4::bigint ELSE k.x_expires_at END
      FROM (SELECT $5::boolean AND coalesce(k.x_expires_at > ${now}, false) AS busy,
                   $5::boolean AND NOT coalesce(k.x_expires_at > ${now}, false) AS take) d
    )
  WHERE k.claim_seq = (SELECT claim_seq FROM s)
  RETURNING k.last_token AS token,
            NOT $5::boolean OR (k.x_fire_at = $2::bigint AND k.x_token = k.last_token) AS won
),
record AS (
  INSERT INTO ${t.claims} (key, fire_at, owner, outcome, token)
  SELECT $1::text, $2::bigint, $3::text,
         CASE WHEN b.won THEN 'won' ELSE 'busy' END, CASE WHEN b.won THEN b.token END
  FROM bump b
  ON CONFLICT (key, fire_at) DO NOTHING
  RETURNING 1
),
per_fire AS (
  INSERT INTO ${t.leases} (key, fire_at, owner, token, expires_at)
  SELECT $1::text, $2::bigint, $3::text, b.token, ${now} + $4::bigint
  FROM bump b WHERE NOT $5::boolean
  ON CONFLICT (key, fire_at) DO UPDATE
    SET owner = excluded.owner, token = excluded.token, expires_at = excluded.expires_at
  RETURNING 1
),
gc_claims AS (
  DELETE FROM ${t.claims} c USING bump
  WHERE c.key = $1::text AND c.fire_at < ${now} - $6::bigint
  RETURNING 1
),
gc_leases AS (
  DELETE FROM ${t.leases} l USING bump
  WHERE l.key = $1::text AND l.expires_at <= ${now}
  RETURNING 1
)
SELECT s.step, s.now_ms, s.rec_owner, s.rec_outcome, s.rec_token,
       b.won, b.token AS new_token, (SELECT count(*) FROM record) AS recorded,
       coalesce(x.x_fire_at, l.fire_at) AS live_fire_at,
       coalesce(x.x_owner, l.owner) AS live_owner,
       coalesce(x.x_token, l.token) AS live_token,
       coalesce(x.x_expires_at, l.expires_at) AS live_expires_at,
       x.x_token IS NOT NULL AS live_exclusive
FROM s
LEFT JOIN bump b ON true
LEFT JOIN s x ON x.x_token = s.rec_token AND x.x_expires_at > s.now_ms
LEFT JOIN ${t.leases} l ON x.x_token IS NULL AND l.key = $1::text AND l.fire_at = $2::bigint
  AND l.token = s.rec_token AND l.expires_at > s.now_ms`;
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
