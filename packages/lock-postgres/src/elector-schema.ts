import {
  type ResolvedStatementOptions,
  type ResolvedTableOptions,
  resolveStatementOptions,
  resolveTableOptions,
  type StatementOptions,
  type TableOptions,
} from '@fleetcron/postgres-shared';

/** Options of `PostgresElector` and {@link postgresElectorSchema}. */
export interface PostgresElectorOptions extends TableOptions, StatementOptions {}

/** {@link PostgresElectorOptions} after defaults and validation. */
export type ResolvedElectorOptions = ResolvedTableOptions & ResolvedStatementOptions;

/** Applies defaults and validates; throws `InvalidOptionError` naming the field. */
export function resolveElectorOptions(
  options: PostgresElectorOptions = {},
): ResolvedElectorOptions {
  return {
    ...resolveTableOptions(options, '_elections'.length),
    ...resolveStatementOptions(options),
  };
}

/** The quoted, schema-qualified name of the elections table. */
export function electionsTable(schema: string, table: string): string {
  return `"${schema}"."${table}_elections"`;
}

/** The database's clock in epoch ms (`now()`: the start of the statement's own transaction). */
const NOW_MS = 'floor(extract(epoch FROM now()) * 1000)::bigint';

/**
 * The DDL `PostgresElector.migrate()` runs (idempotent; concurrent runs queue on an advisory
 * lock). One row per election: its term counter (`last_term`, never reset, never decreases),
 * and the live term's leader and expiry by the database's `now()`. Never delete rows: the
 * counter must not go back.
 */
export function postgresElectorSchema(
  options: Pick<PostgresElectorOptions, 'schema' | 'table'> = {},
): string {
  const { schema, table } = resolveElectorOptions(options);
  const createSchema = schema === 'public' ? '' : `CREATE SCHEMA IF NOT EXISTS "${schema}";\n`;
  return `SELECT pg_advisory_xact_lock(hashtext('fleetcron-elector:${schema}.${table}'));
${createSchema}CREATE TABLE IF NOT EXISTS ${electionsTable(schema, table)} (
  election   text COLLATE "C" PRIMARY KEY,
  last_term  bigint NOT NULL, -- term counter: never reset, never decreases
  leader     text,            -- the live term's candidate id (NULL after a resignation)
  term       bigint,
  expires_at bigint           -- epoch ms by the database's now()
);
`;
}

/** The elector's statements (each one statement in its own implicit transaction). */
export function electorStatements(t: string) {
  return {
    /**
     * $1 election, $2 id, $3 ttlMs. Starts a new term (counter + 1) unless another id holds a
     * live one; the conflicting row is locked by the upsert, and the follower branch reads it
     * `FOR SHARE` (its latest version). Returns one row: status, term, expires_at, leader, now_ms.
     */
    campaign: `WITH clock AS (SELECT ${NOW_MS} AS now_ms),
won AS (
  INSERT INTO ${t} AS e (election, last_term, leader, term, expires_at)
  SELECT $1::text, 1, $2::text, 1, clock.now_ms + $3::bigint FROM clock
  ON CONFLICT (election) DO UPDATE
    SET last_term = e.last_term + 1, term = e.last_term + 1,
        leader = EXCLUDED.leader, expires_at = EXCLUDED.expires_at
    WHERE e.leader IS NULL OR e.expires_at <= (SELECT now_ms FROM clock) OR e.leader = EXCLUDED.leader
  RETURNING e.term, e.expires_at, e.leader
), cur AS (
  SELECT e.term, e.expires_at, e.leader FROM ${t} e
  WHERE e.election = $1::text AND NOT EXISTS (SELECT 1 FROM won) FOR SHARE
)
SELECT 'elected' AS status, term, expires_at, leader, (SELECT now_ms FROM clock) AS now_ms FROM won
UNION ALL
SELECT 'follower', term, expires_at, leader, (SELECT now_ms FROM clock) FROM cur`,
    /** $1 election, $2 term, $3 id, $4 ttlMs → expires_at, or no row (not the live term). */
    renew: `UPDATE ${t} SET expires_at = ${NOW_MS} + $4::bigint
WHERE election = $1::text AND term = $2::bigint AND leader = $3::text AND expires_at > ${NOW_MS}
RETURNING expires_at`,
    /** $1 election, $2 term → `live` (had not expired), or no row (not the current term). */
    resign: `WITH cur AS (
  SELECT election, expires_at FROM ${t}
  WHERE election = $1::text AND term = $2::bigint AND leader IS NOT NULL FOR UPDATE
)
UPDATE ${t} e SET leader = NULL, expires_at = NULL FROM cur WHERE e.election = cur.election
RETURNING cur.expires_at > ${NOW_MS} AS live`,
    /** $1 election → the live leader, or no row. */
    leader: `SELECT leader, term, expires_at FROM ${t}
WHERE election = $1::text AND leader IS NOT NULL AND expires_at > ${NOW_MS}`,
  };
}

/** The names of {@link electorStatements}. */
export type ElectorStatement = keyof ReturnType<typeof electorStatements>;
