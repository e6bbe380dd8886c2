import { claimFunctionSql } from './claim.js';
import { claimManyFunctionSql } from './claim-many.js';
import { extendFunctionSql, releaseFunctionSql } from './lease-functions.js';
import { type PostgresLockOptions, resolveLockOptions } from './options.js';

/** Quoted, schema-qualified names of the lock's two tables and its claim functions. */
export interface LockTables {
  /** One row per key, never deleted: fencing-token counter, the catch-up mark and the exclusive lease. */
  keys: string;
  /**
   * One row per claimed fire, kept for the claim window (longer while it holds a live per-fire
   * lease): the claim record, and the per-fire lease of an `exclusive: false` win.
   */
  claims: string;
  /** The PL/pgSQL function that performs a claim (see `claimFunctionSql`). */
  claim: string;
  /** The PL/pgSQL function that performs a batch of claims (see `claimManyFunctionSql`). */
  claimMany: string;
  /** The PL/pgSQL function that renews a lease (see `extendFunctionSql`). */
  extend: string;
  /** The PL/pgSQL function that releases a lease (see `releaseFunctionSql`). */
  release: string;
}

/** The quoted table names for a validated `schema` and `table` prefix. */
export function lockTables(schema: string, table: string): LockTables {
  const q = (suffix: string) => `"${schema}"."${table}_${suffix}"`;
  return {
    keys: q('keys'),
    claims: q('claims'),
    claim: q('claim'),
    claimMany: q('claim_many'),
    extend: q('extend'),
    release: q('release'),
  };
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
  last_token   bigint NOT NULL, -- fencing-token counter: never reset, never decreases
  mark         bigint,          -- catch-up mark: the newest fire ever claimed (never decreases)
  x_fire_at    bigint,          -- the exclusive lease (NULL when released)
  x_owner      text,
  x_token      bigint,
  x_expires_at bigint
);
CREATE TABLE IF NOT EXISTS ${t.claims} (
  key        text COLLATE "C" NOT NULL,
  fire_at    bigint NOT NULL,
  owner      text NOT NULL,
  outcome    text NOT NULL CHECK (outcome IN ('won', 'busy')),
  token      bigint,          -- NULL for busy
  expires_at bigint,          -- the per-fire lease of an exclusive: false win (NULL otherwise, or released)
  PRIMARY KEY (key, fire_at)
);
${claimFunctionSql(t)};
${claimManyFunctionSql(t)};
${extendFunctionSql(t)};
${releaseFunctionSql(t)};
`;
}
