import { NOW_MS } from './claim.js';
import type { LockTables } from './schema.js';

/**
 * The renewal and release functions `migrate()` creates (`<table>_extend`, `<table>_release`).
 * Each is one statement's work, but as a PL/pgSQL function its statements are planned once per
 * connection (PL/pgSQL caches their plans) instead of on every call: the call itself is all the
 * server parses and plans. Like the claim function, they need no session state from the client,
 * so transaction poolers work.
 */

/**
 * Renews a lease: key, fireAt, token, exclusive, leaseMs. Matches the slot **and** the token,
 * and only a live lease (judged by `now()`). Returns one row: the renewed lease's `fire_at`,
 * `owner`, `token`, `expires_at`, or NULLs when it was not held; and `now_ms`.
 */
export function extendFunctionSql(t: LockTables): string {
  return `CREATE OR REPLACE FUNCTION ${t.extend}(
  p_key text, p_fire_at bigint, p_token bigint, p_exclusive boolean, p_lease_ms bigint,
  OUT fire_at bigint, OUT owner text, OUT token bigint, OUT expires_at bigint, OUT now_ms bigint
) LANGUAGE plpgsql VOLATILE AS $fleetcron$
#variable_conflict use_column
BEGIN
  now_ms := ${NOW_MS};
  IF p_exclusive THEN
    UPDATE ${t.keys} k SET x_expires_at = now_ms + p_lease_ms
      WHERE k.key = p_key AND k.x_token = p_token AND k.x_expires_at > now_ms
      RETURNING k.x_fire_at, k.x_owner, k.x_token, k.x_expires_at INTO fire_at, owner, token, expires_at;
  ELSE
    UPDATE ${t.claims} c SET expires_at = now_ms + p_lease_ms
      WHERE c.key = p_key AND c.fire_at = p_fire_at AND c.token = p_token AND c.expires_at > now_ms
      RETURNING c.fire_at, c.owner, c.token, c.expires_at INTO fire_at, owner, token, expires_at;
  END IF;
END
$fleetcron$`;
}

/**
 * Releases a lease: key, fireAt, token, exclusive. Never touches another token's lease. An
 * exclusive lease frees the key's slot (`SELECT ... FOR UPDATE` reads the current row); a
 * per-fire lease clears its claim record's `expires_at` (the record stays). Returns `live`:
 * `true` when the lease was held and had not expired.
 */
export function releaseFunctionSql(t: LockTables): string {
  return `CREATE OR REPLACE FUNCTION ${t.release}(
  p_key text, p_fire_at bigint, p_token bigint, p_exclusive boolean, OUT live boolean
) LANGUAGE plpgsql VOLATILE AS $fleetcron$
DECLARE
  v_now bigint := ${NOW_MS};
  v_expires bigint;
BEGIN
  IF p_exclusive THEN
    SELECT k.x_expires_at INTO v_expires FROM ${t.keys} k
      WHERE k.key = p_key AND k.x_token = p_token FOR UPDATE;
    IF FOUND THEN
      UPDATE ${t.keys} k SET x_fire_at = NULL, x_owner = NULL, x_token = NULL, x_expires_at = NULL
        WHERE k.key = p_key;
    END IF;
    live := coalesce(v_expires > v_now, false);
  ELSE
    UPDATE ${t.claims} c SET expires_at = NULL
      WHERE c.key = p_key AND c.fire_at = p_fire_at AND c.token = p_token AND c.expires_at > v_now;
    live := FOUND;
  END IF;
END
$fleetcron$`;
}

/** The renewal statement: $1 key, $2 fireAt, $3 token, $4 exclusive, $5 leaseMs. */
export function extendSql(t: LockTables): string {
  return `SELECT * FROM ${t.extend}($1::text, $2::bigint, $3::bigint, $4::boolean, $5::bigint)`;
}

/** The release statement: $1 key, $2 fireAt, $3 token, $4 exclusive. Returns `live`. */
export function releaseSql(t: LockTables): string {
  return `SELECT * FROM ${t.release}($1::text, $2::bigint, $3::bigint, $4::boolean)`;
}
