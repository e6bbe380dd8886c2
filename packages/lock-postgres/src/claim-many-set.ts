import type { LockTables } from './schema.js';

/**
 * The set-based steps of the batch claim function (see `claimManyFunctionSql`): a batch whose
 * keys are all different and that holds no catch-up claim is answered by a handful of
 * statements over arrays instead of six statements per request. Every request is decided by the
 * same rules as the claim function's block (`claimBodySql`), judged by the same `now()`
 * (`v_now`); the names below are the function's variables.
 *
 * Lock protocol (shared with the per-request path, see `preLockSql`): first the keys that need a
 * row lock are inserted when missing (`INSERT ... ON CONFLICT DO NOTHING`, sorted by key), then
 * their rows are locked (`SELECT ... ORDER BY key FOR UPDATE`). A transaction waits in the second
 * step only for row locks taken by another transaction's second step (a key it would wait on
 * as another's uncommitted insert it has already waited for in the first step), and both steps go
 * in key order, so batches never deadlock with each other; a single claim holds one key.
 */

/**
 * The answer a request gets from the fire's claim record `c` (the claim function's step "the
 * fire's record"), for request `u` with owner `u.owner`; `kx` is the key's row when it holds the
 * owner's live exclusive lease of that record's token. Columns: status, reason, token, expires,
 * exclusive.
 */
function recordAnswer(): string {
  return `CASE WHEN c.owner <> u.owner THEN 'lost' WHEN c.outcome = 'busy' THEN 'busy'
        WHEN c.expires_at > v_now OR kx.x_expires_at IS NOT NULL THEN 'won' ELSE 'lost' END AS st,
      CASE WHEN c.owner <> u.owner OR (c.outcome = 'won' AND NOT coalesce(c.expires_at > v_now, false)
        AND kx.x_expires_at IS NULL) THEN 'claimed' END AS rs,
      CASE WHEN c.owner = u.owner AND c.outcome = 'won' AND (c.expires_at > v_now OR kx.x_expires_at IS NOT NULL)
        THEN c.token END AS tk,
      CASE WHEN c.owner = u.owner AND c.outcome = 'won'
        THEN CASE WHEN c.expires_at > v_now THEN c.expires_at ELSE kx.x_expires_at END END AS ex,
      CASE WHEN c.owner = u.owner AND c.outcome = 'won'
        THEN CASE WHEN c.expires_at > v_now THEN false WHEN kx.x_expires_at IS NOT NULL THEN true END END AS xc`;
}

/** Joins of {@link recordAnswer}: the record of `u`'s fire, and the live exclusive lease of its token. */
function recordJoins(t: LockTables): string {
  return `LEFT JOIN ${t.claims} c ON c.key = u.key AND c.fire_at = u.fire_at
    LEFT JOIN ${t.keys} kx ON kx.key = u.key AND c.owner = u.owner AND c.outcome = 'won'
      AND NOT coalesce(c.expires_at > v_now, false) AND kx.x_token = c.token AND kx.x_expires_at > v_now`;
}

/**
 * Step 1, one statement, no lock: whether the batch can take the set-based path (`v_simple`:
 * every key once, no catch-up claim), the answers of the requests that need no lock (stale; the
 * fire's record exists: lost, or a replay for the same owner; early), into `n_*`, the other
 * requests into `t_*`, and the first of their keys in key order (`COLLATE "C"`) into `v_first`.
 */
export function classifySql(t: LockTables): string {
  return classify(
    t,
    'unnest(p_keys, p_fire_ats, p_owners, p_leases_ms, p_exclusives, p_sinces) WITH ORDINALITY AS u(key, fire_at, owner, lease_ms, excl, since, i)',
    'v_simple, n_i, n_status, n_reason, n_token, n_expires, n_excl, t_key, t_fire, t_owner, t_lease, t_excl, t_i, v_first',
  );
}

/**
 * Step 1 again, for the requests left in `t_*` after the batch waited for the first of their
 * keys: a batch that waited there most likely waited for another instance's batch of the same
 * fires, whose records are now committed. Those requests are answered from the records (into
 * `o_*`) instead of locking their keys' rows first and meeting the records there.
 */
export function reclassifySql(t: LockTables): string {
  return classify(
    t,
    'unnest(t_key, t_fire, t_owner, t_lease, t_excl, NULL::bigint[], t_i) AS u(key, fire_at, owner, lease_ms, excl, since, i)',
    'v_simple, o_i, o_status, o_reason, o_token, o_expires, o_excl, t_key, t_fire, t_owner, t_lease, t_excl, t_i, v_first',
  );
}

function classify(t: LockTables, source: string, into: string): string {
  return `SELECT count(DISTINCT q.key) = count(*) AND bool_and(q.since IS NULL),
    array_agg(q.i) FILTER (WHERE q.st IS NOT NULL), array_agg(q.st) FILTER (WHERE q.st IS NOT NULL),
    array_agg(q.rs) FILTER (WHERE q.st IS NOT NULL), array_agg(q.tk) FILTER (WHERE q.st IS NOT NULL),
    array_agg(q.ex) FILTER (WHERE q.st IS NOT NULL), array_agg(q.xc) FILTER (WHERE q.st IS NOT NULL),
    array_agg(q.key) FILTER (WHERE q.st IS NULL),
    array_agg(q.fire_at) FILTER (WHERE q.st IS NULL),
    array_agg(q.owner) FILTER (WHERE q.st IS NULL),
    array_agg(q.lease_ms) FILTER (WHERE q.st IS NULL),
    array_agg(q.excl) FILTER (WHERE q.st IS NULL),
    array_agg(q.i) FILTER (WHERE q.st IS NULL),
    min(q.key COLLATE "C") FILTER (WHERE q.st IS NULL)
  INTO ${into}
  FROM (
    SELECT u.key, u.fire_at, u.owner, u.lease_ms, u.excl, u.since, u.i,
      CASE WHEN u.fire_at < coalesce(u.since, v_now - p_window_ms) THEN 'lost'
        WHEN c.key IS NULL THEN CASE WHEN u.fire_at > v_now + p_early_ms THEN 'lost' END
        ELSE ra.st END AS st,
      CASE WHEN u.fire_at < coalesce(u.since, v_now - p_window_ms) THEN 'stale'
        WHEN c.key IS NULL THEN CASE WHEN u.fire_at > v_now + p_early_ms THEN 'early' END
        ELSE ra.rs END AS rs,
      ra.tk, ra.ex, ra.xc
    FROM ${source}
    ${recordJoins(t)}
    CROSS JOIN LATERAL (SELECT ${recordAnswer()}) ra
  ) q`;
}

/**
 * After {@link preLockSql}: locks the row of the first key of `t_*` (waiting for whoever holds
 * it), and when that key's fire now has a record (another batch of the same fires committed
 * while this one waited), answers the rest from their records ({@link reclassifySql}) before
 * locking any other row. Only lock-free reads come between this lock and the others, which are
 * taken in key order after it, so the lock order is unchanged.
 */
export function waitFirstSql(t: LockTables): string {
  return `PERFORM 1 FROM ${t.keys} k WHERE k.key = v_first FOR UPDATE;
    IF EXISTS (SELECT 1 FROM ${t.claims} c WHERE c.key = v_first
        AND c.fire_at = t_fire[array_position(t_key, v_first)]) THEN
      ${reclassifySql(t)};
    END IF`;
}

/**
 * The lock protocol over the keys in `keysVar` (sorted by key, without repeats): insert the
 * missing key rows, then lock every row, both in key order; each step may wait only for what is
 * left of the batch's wait (`lock_timeout`).
 */
export function preLockSql(t: LockTables, keysVar: string, waitLeft: string): string {
  const timeout = `PERFORM set_config('lock_timeout', greatest(${waitLeft}, 1)::text || 'ms', true);`;
  return `${timeout}
    INSERT INTO ${t.keys} AS k (key, last_token)
      SELECT x.key, 0 FROM unnest(${keysVar}) x(key)
      WHERE NOT EXISTS (SELECT 1 FROM ${t.keys} k2 WHERE k2.key = x.key)
      ORDER BY x.key COLLATE "C"
      ON CONFLICT (key) DO NOTHING;
    ${timeout}`;
}

/**
 * Steps 2 and 3 of the set-based path, for the requests in `t_*` (keys all different, sorted):
 * lock their key rows (in key order, after {@link preLockSql}), then, in one statement, decide
 * each from its locked row (busy: exclusive and a live exclusive lease; else token =
 * last_token + 1), insert the claim records `ON CONFLICT DO NOTHING`, write the key rows of the
 * inserted ones and collect their keys' records past the window. The answers of the inserted
 * requests go to `w_*`; a request whose insert met a record committed after step 1 is answered
 * from that record by {@link lateRecordSql}.
 */
export function decideSql(t: LockTables): string {
  return `SELECT array_agg(s.key), array_agg(s.last_token), array_agg(s.x_expires_at)
    INTO l_key, l_last, l_xexp
    FROM (SELECT k.key, k.last_token, k.x_expires_at FROM ${t.keys} k
      WHERE k.key = ANY (t_key) ORDER BY k.key FOR UPDATE) s;
  WITH d AS (
    SELECT u.key, u.fire_at, u.owner, u.lease_ms, u.excl, u.i,
      CASE WHEN NOT (u.excl AND coalesce(l.x_expires_at > v_now, false)) THEN l.last_token + 1 END AS tk
    FROM unnest(t_key, t_fire, t_owner, t_lease, t_excl, t_i) AS u(key, fire_at, owner, lease_ms, excl, i)
    JOIN unnest(l_key, l_last, l_xexp) AS l(key, last_token, x_expires_at) ON l.key = u.key
  ), ins AS (
    INSERT INTO ${t.claims} AS c (key, fire_at, owner, outcome, token, expires_at)
      SELECT d.key, d.fire_at, d.owner, CASE WHEN d.tk IS NULL THEN 'busy' ELSE 'won' END, d.tk,
        CASE WHEN d.tk IS NOT NULL AND NOT d.excl THEN v_now + d.lease_ms END
      FROM d ORDER BY d.key COLLATE "C"
      ON CONFLICT (key, fire_at) DO NOTHING
      RETURNING c.key
  ), upd AS (
    UPDATE ${t.keys} k SET last_token = coalesce(d.tk, k.last_token), mark = greatest(k.mark, d.fire_at),
      x_fire_at = CASE WHEN d.excl AND d.tk IS NOT NULL THEN d.fire_at ELSE k.x_fire_at END,
      x_owner = CASE WHEN d.excl AND d.tk IS NOT NULL THEN d.owner ELSE k.x_owner END,
      x_token = CASE WHEN d.excl AND d.tk IS NOT NULL THEN d.tk ELSE k.x_token END,
      x_expires_at = CASE WHEN d.excl AND d.tk IS NOT NULL THEN v_now + d.lease_ms ELSE k.x_expires_at END
    FROM d JOIN ins ON ins.key = d.key WHERE k.key = d.key
  ), del AS (
    DELETE FROM ${t.claims} c USING ins WHERE c.key = ins.key AND c.fire_at < v_now - p_window_ms
      AND (c.expires_at IS NULL OR c.expires_at <= v_now)
  )
  SELECT array_agg(d.i), array_agg(CASE WHEN d.tk IS NULL THEN 'busy' ELSE 'won' END),
    array_agg(d.tk), array_agg(CASE WHEN d.tk IS NOT NULL THEN v_now + d.lease_ms END),
    array_agg(CASE WHEN d.tk IS NOT NULL THEN d.excl END), count(*)
  INTO w_i, w_status, w_token, w_expires, w_excl, v_count
  FROM d JOIN ins ON ins.key = d.key`;
}

/**
 * The requests of `t_*` that {@link decideSql} did not insert (a claim of the same fire
 * committed between step 1 and the lock): answered from that record, read again (a fresh
 * snapshot), or `lost (claimed)` when it is gone (withdrawn meanwhile), into `m_*`.
 */
export function lateRecordSql(t: LockTables): string {
  return `SELECT array_agg(u.i), array_agg(coalesce(ra.st, 'lost')),
    array_agg(CASE WHEN c.key IS NULL THEN 'claimed' ELSE ra.rs END),
    array_agg(ra.tk), array_agg(ra.ex), array_agg(ra.xc)
  INTO m_i, m_status, m_reason, m_token, m_expires, m_excl
  FROM unnest(t_key, t_fire, t_owner, t_i) AS u(key, fire_at, owner, i)
    ${recordJoins(t)}
    CROSS JOIN LATERAL (SELECT ${recordAnswer()}) ra
  WHERE u.i <> ALL (coalesce(w_i, '{}'))`;
}
