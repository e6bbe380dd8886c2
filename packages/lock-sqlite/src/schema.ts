/**
 * The lock's tables. Times are epoch ms (INTEGER) read from the host's clock. Tables are
 * `WITHOUT ROWID`: every lookup is by primary key.
 *
 * - `fleetcron_claims`: one record per claimed fire, kept until `keep_until` (= fireAt + windowMs).
 * - `fleetcron_leases`: live leases; slot `x` is a job's exclusive lease, else the fire time.
 * - `fleetcron_tokens`: the last fencing token of each key, kept forever so tokens never repeat.
 * - `fleetcron_marks`: the catch-up mark of each key (the newest fire ever recorded), kept forever.
 */
export const SQLITE_LOCK_SCHEMA = `
CREATE TABLE IF NOT EXISTS fleetcron_claims (
  key        TEXT    NOT NULL,
  fire_at    INTEGER NOT NULL,
  owner      TEXT    NOT NULL,
  outcome    TEXT    NOT NULL CHECK (outcome IN ('won', 'busy')),
  token      INTEGER,
  keep_until INTEGER NOT NULL,
  PRIMARY KEY (key, fire_at)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS fleetcron_claims_keep ON fleetcron_claims (keep_until);
CREATE TABLE IF NOT EXISTS fleetcron_leases (
  key        TEXT    NOT NULL,
  slot       TEXT    NOT NULL,
  fire_at    INTEGER NOT NULL,
  owner      TEXT    NOT NULL,
  token      INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  exclusive  INTEGER NOT NULL,
  PRIMARY KEY (key, slot)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS fleetcron_leases_expiry ON fleetcron_leases (expires_at);
CREATE TABLE IF NOT EXISTS fleetcron_tokens (
  key        TEXT    PRIMARY KEY,
  last_token INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS fleetcron_marks (
  key  TEXT    PRIMARY KEY,
  mark INTEGER NOT NULL
) WITHOUT ROWID;
`;
