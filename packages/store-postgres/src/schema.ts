import { TERMINAL_STATUSES } from '@fleetcron/core/backend';
import { type PostgresStoreOptions, resolveStoreOptions } from './options.js';

/** Every status an execution row may hold, as a SQL list: `'running', 'succeeded', ...`. */
const STATUSES = ['running', ...TERMINAL_STATUSES];
const STATUS_LIST = STATUSES.map((s) => `'${s}'`).join(', ');
/** SQL: the check constraint `oid` names every status (an older table's may lack new ones). */
const NAMES_EVERY_STATUS = STATUSES.map((s) => `pg_get_constraintdef(oid) LIKE '%''${s}''%'`).join(
  ' AND ',
);

/** Quoted, schema-qualified names of the store's tables. */
export interface StoreTables {
  /** One row per execution (id = the scheduler's UUID). */
  executions: string;
  /** One row per job: paused flag and last outcome. */
  jobs: string;
  /** One row per live instance (registry). */
  instances: string;
  /** Run requests not decided yet: pending or held by a take. */
  runRequests: string;
  /** Decided run requests (moved out of `runRequests`), kept an hour, then collected. */
  runDecisions: string;
  /** Stored schedules (and tombstones of removed ones). */
  schedules: string;
  /** The audit log: one row per mutation, appended by the mutation's own statement. */
  audit: string;
}

/** The quoted table names for a validated `schema` and `table` prefix. */
export function storeTables(schema: string, table: string): StoreTables {
  return {
    executions: `"${schema}"."${table}_executions"`,
    jobs: `"${schema}"."${table}_jobs"`,
    instances: `"${schema}"."${table}_instances"`,
    runRequests: `"${schema}"."${table}_run_requests"`,
    runDecisions: `"${schema}"."${table}_run_decisions"`,
    schedules: `"${schema}"."${table}_schedules"`,
    audit: `"${schema}"."${table}_audit"`,
  };
}

/**
 * The DDL `PostgresStore.migrate()` runs: idempotent `CREATE ... IF NOT EXISTS` statements, for
 * use in your own migration tool if you prefer. Times are epoch milliseconds (`bigint`). Text
 * containing U+0000 is stored escaped (see `encodeText` in `@fleetcron/postgres-shared`).
 */
export function postgresStoreSchema(
  options: Pick<PostgresStoreOptions, 'schema' | 'table'> = {},
): string {
  const { schema, table } = resolveStoreOptions(options);
  const t = storeTables(schema, table);
  const createSchema = schema === 'public' ? '' : `CREATE SCHEMA IF NOT EXISTS "${schema}";\n`;
  return `${createSchema}CREATE TABLE IF NOT EXISTS ${t.executions} (
  id          text COLLATE "C" PRIMARY KEY,
  job         text COLLATE "C" NOT NULL,
  fire_at     bigint NOT NULL,
  status      text NOT NULL CHECK (status IN (${STATUS_LIST})),
  attempt     integer NOT NULL,
  instance_id text NOT NULL,
  token       bigint,
  started_at  bigint NOT NULL,
  finished_at bigint,
  error       text,
  reason      text,
  requested_by text,
  shard       text
);
-- added by fleet control (issue 13): tables made before it gain the column
ALTER TABLE ${t.executions} ADD COLUMN IF NOT EXISTS requested_by text;
-- added by sharded fires (issue 16): the part as JSON ({"index":2,"count":8}), NULL for a plain fire
ALTER TABLE ${t.executions} ADD COLUMN IF NOT EXISTS shard text;
-- history(job): newest first, keyset pagination on (started_at, id)
CREATE INDEX IF NOT EXISTS "${table}_exec_history"
  ON ${t.executions} (job, started_at DESC, id DESC);
-- prune(before)
CREATE INDEX IF NOT EXISTS "${table}_exec_started" ON ${t.executions} (started_at);
-- A table made by an older version, whose check lacks a status added since: replace it once.
DO $fleetcron$
DECLARE c record;
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_constraint WHERE conrelid = '${t.executions}'::regclass
      AND contype = 'c' AND ${NAMES_EVERY_STATUS}) THEN
    FOR c IN SELECT conname FROM pg_constraint
        WHERE conrelid = '${t.executions}'::regclass AND contype = 'c' LOOP
      EXECUTE format('ALTER TABLE ${t.executions} DROP CONSTRAINT %I', c.conname);
    END LOOP;
    ALTER TABLE ${t.executions} ADD CONSTRAINT "${table}_executions_status"
      CHECK (status IN (${STATUS_LIST}));
  END IF;
END
$fleetcron$;
CREATE TABLE IF NOT EXISTS ${t.jobs} (
  job              text COLLATE "C" PRIMARY KEY,
  paused           boolean NOT NULL DEFAULT false,
  last_status      text,
  last_fire_at     bigint,
  last_finished_at bigint
);
ALTER TABLE ${t.jobs} ADD COLUMN IF NOT EXISTS paused_by text;
ALTER TABLE ${t.jobs} ADD COLUMN IF NOT EXISTS paused_at bigint;
-- the registry: one row per instance, the record as JSON text; last_seen_at by the DB clock
CREATE TABLE IF NOT EXISTS ${t.instances} (
  instance_id  text COLLATE "C" PRIMARY KEY,
  record       text NOT NULL,
  heartbeat_ms bigint NOT NULL,
  last_seen_at bigint NOT NULL
);
-- run requests not decided yet, oldest first (seq): a take holds one (take_id, taken_by,
-- taken_until by the DB clock, takes) until its taker decides it, releases it (taken_until NULL)
-- or the lease ends
CREATE TABLE IF NOT EXISTS ${t.runRequests} (
  id           text COLLATE "C" PRIMARY KEY,
  job          text COLLATE "C" NOT NULL,
  requested_by text NOT NULL,
  requested_at bigint NOT NULL,
  seq          bigserial NOT NULL,
  data         text,
  takes        integer NOT NULL DEFAULT 0,
  take_id      text,
  taken_by     text,
  taken_until  bigint
);
-- added by exactly-once run requests (issue 29): tables made before it gain the columns; their
-- rows (never taken) are pending
ALTER TABLE ${t.runRequests} ADD COLUMN IF NOT EXISTS data text;
ALTER TABLE ${t.runRequests} ADD COLUMN IF NOT EXISTS takes integer NOT NULL DEFAULT 0;
ALTER TABLE ${t.runRequests} ADD COLUMN IF NOT EXISTS take_id text;
ALTER TABLE ${t.runRequests} ADD COLUMN IF NOT EXISTS taken_by text;
ALTER TABLE ${t.runRequests} ADD COLUMN IF NOT EXISTS taken_until bigint;
CREATE INDEX IF NOT EXISTS "${table}_runreq_job" ON ${t.runRequests} (job, seq);
-- decided run requests, moved here by their decision (so an instance of an earlier version,
-- which deletes what it takes, never sees them): kept an hour, then collected by takes
CREATE TABLE IF NOT EXISTS ${t.runDecisions} (
  id           text COLLATE "C" PRIMARY KEY,
  job          text COLLATE "C" NOT NULL,
  requested_by text NOT NULL,
  requested_at bigint NOT NULL,
  seq          bigint NOT NULL,
  data         text,
  takes        integer NOT NULL,
  take_id      text NOT NULL,
  taken_by     text NOT NULL,
  taken_until  bigint,
  decided_at   bigint NOT NULL,
  fire_at      bigint NOT NULL,
  decided_by   text NOT NULL
);
CREATE INDEX IF NOT EXISTS "${table}_rundec_at" ON ${t.runDecisions} (decided_at);
-- stored schedules (issue 28): definition as JSON text, a version per change, who/when of the
-- last change; a removed schedule stays as a tombstone (removed) that keeps its version
CREATE TABLE IF NOT EXISTS ${t.schedules} (
  id         text COLLATE "C" PRIMARY KEY,
  handler    text COLLATE "C" NOT NULL,
  trigger    text NOT NULL,
  data       text NOT NULL,
  enabled    boolean NOT NULL,
  options    text NOT NULL,
  version    bigint NOT NULL,
  removed    boolean NOT NULL DEFAULT false,
  created_at bigint NOT NULL,
  created_by text NOT NULL,
  updated_at bigint NOT NULL,
  updated_by text NOT NULL
);
-- listSchedules({ handler }): live schedules of a handler by id
CREATE INDEX IF NOT EXISTS "${table}_sched_h" ON ${t.schedules} (handler, id) WHERE NOT removed;
-- the audit log (issue 30): one row per pause, resume, run request or schedule write, inserted by
-- the mutation's own statement; seq orders it (newest first) and is the entry's id; at by the DB
-- clock; actor is the entry's by; details JSON text. Pruned by each append (bounded batch).
CREATE TABLE IF NOT EXISTS ${t.audit} (
  seq        bigserial PRIMARY KEY,
  at         bigint NOT NULL,
  action     text NOT NULL,
  job        text COLLATE "C" NOT NULL,
  actor      text,
  note       text,
  request_id text,
  schedule   text,
  version    bigint,
  details    text
);
-- listAudit({ job }): one job's entries newest first; the age bound
CREATE INDEX IF NOT EXISTS "${table}_audit_job" ON ${t.audit} (job, seq);
CREATE INDEX IF NOT EXISTS "${table}_audit_at" ON ${t.audit} (at);
`;
}
