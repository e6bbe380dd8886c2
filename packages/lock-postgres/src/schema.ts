import { claimFunctionSql } from './claim.js';
import { type PostgresLockOptions, resolveLockOptions } from './options.js';

/** Quoted, schema-qualified names of the lock's three tables and its claim function. */
export interface LockTables {
  /**
   * One row per key, never deleted: fencing-token counter, claim sequence, the catch-up mark and
   * the exclusive lease.
   */
  keys: string;
  /** One row per claimed fire, kept for the claim window. */
  claims: string;
  /** One row per live per-fire lease (claims with `exclusive: false`). */
  leases: string;
  /** The PL/pgSQL function that performs a claim (see `claimFunctionSql`). */
  claim: string;
}

/** The quoted table names for a validated `schema` and `table` prefix. */
export function lockTables(schema: string, table: string): LockTables {
  const q = (suffix: string) => `"${schema}"."${table}_${suffix}"`;
  return { keys: q('keys'), claims: q('claims'), leases: q('leases'), claim: q('claim') };
}

/**
 * The DDL `PostgresLock.migrate()` runs: idempotent `CREATE ... IF NOT EXISTS` statements and
 * `CREATE OR REPLACE FUNCTION` for the claim function, for use in your own migration tool if you
 * prefer. Run as one transaction (as `migrate()` does), the leading transaction-scoped advisory
 * lock makes concurrent runs queue instead of failing on the catalog ("tuple concurrently
 * updated"). Times are epoch milliseconds (`bigint`), judged
 * against the database's `now()`. Keys and owners containing U+0000 are stored escaped (see
 * `encodeText` in `@fleetcron/postgres-shared`).
 *
 * Never delete rows of `<table>_keys`: the row holds the key's fencing-token counter, which
 * must never go back.
 */
export function postgresLockSchema(
  options: Pick<PostgresLockOptions, 'schema' | 'table'> = {},
): string {
  const { schema, table } = resolveLockOptions(options);
  const t = lockTables(schema, table);
  const createSchema = schema === 'public' ? '' : `CREATE SCHEMA IF NOT EXISTS "${schema}";\n`;
  const serialise = `SELECT pg_advisory_xact_lock(hashtext('fleetcron-lock:${schema}.${table}')); -- concurrent migrations queue\n`;
  return `${serialise}${createSchema}CREATE TABLE IF NOT EXISTS ${t.keys} (
  key          text COLLATE "C" PRIMARY KEY,
  claim_seq    bigint NOT NULL, -- +1 on every claim record written (kept for older clients' snapshot check)
  last_token   bigint NOT NULL, -- fencing-token counter: never reset, never decreases
  x_fire_at    bigint,          -- the exclusive lease (NULL when released)
  x_owner      text,
  x_token      bigint,
  x_expires_at bigint
);
-- The catch-up mark: the newest fire ever claimed for the key (never collected, never decreases).
ALTER TABLE ${t.keys} ADD COLUMN IF NOT EXISTS mark bigint;
CREATE TABLE IF NOT EXISTS ${t.claims} (
  key     text COLLATE "C" NOT NULL,
  fire_at bigint NOT NULL,
  owner   text NOT NULL,
  outcome text NOT NULL CHECK (outcome IN ('won', 'busy')),
  token   bigint,                 -- NULL for busy
  PRIMARY KEY (key, fire_at)
);
CREATE TABLE IF NOT EXISTS ${t.leases} (
  key        text COLLATE "C" NOT NULL,
  fire_at    bigint NOT NULL,
  owner      text NOT NULL,
  token      bigint NOT NULL,
  expires_at bigint NOT NULL,
  PRIMARY KEY (key, fire_at)
);
-- Earlier signatures of the claim function (before waitMs; before earlyMs; before since), dropped
-- so one remains. Older clients' 8-argument calls resolve to the new one (since defaults to NULL).
DROP FUNCTION IF EXISTS ${t.claim}(text, bigint, text, bigint, boolean, bigint);
DROP FUNCTION IF EXISTS ${t.claim}(text, bigint, text, bigint, boolean, bigint, bigint);
DROP FUNCTION IF EXISTS ${t.claim}(text, bigint, text, bigint, boolean, bigint, bigint, bigint);
${claimFunctionSql(t)};
`;
}
