/**
 * The lock's operations, run on one connection (in the worker thread, or inline on the user's
 * `Database`). Each mutating operation is one `BEGIN IMMEDIATE` transaction: it takes the write
 * lock first, so two processes never read the same state and both decide to win.
 * Only type imports from outside, and `statementCache` from its own entry: the worker thread
 * loads this file by URL.
 */
import type { ClaimedFire, ClaimResult, Lease, LockInspection, MarkReading } from '@fleetcron/core';
import type { SqliteDatabase, SqliteOperations } from '@fleetcron/sqlite-shared';
import { statementCache } from '@fleetcron/sqlite-shared/statement-cache';
import { SQLITE_LOCK_SCHEMA } from './schema.js';

/**
 * Arguments of the `claim` operation (a `ClaimRequest` without its signal, plus the window and
 * the early tolerance). `since`: a catch-up claim's oldest fire (`null` for an ordinary claim).
 */
export interface ClaimArgs {
  key: string;
  fireAt: number;
  owner: string;
  leaseMs: number;
  exclusive: boolean;
  windowMs: number;
  earlyToleranceMs: number;
  since: number | null;
}

/** Arguments of the `extend` operation (and of each item of `extendMany`). */
export interface ExtendArgs {
  lease: Lease;
  leaseMs: number;
}

/** Records and leases deleted per collection pass (keeps each transaction short). */
const COLLECT_BATCH = 500;

interface LeaseRow {
  key: string;
  slot: string;
  fire_at: number;
  owner: string;
  token: number;
  expires_at: number;
  exclusive: number;
}

const slotOf = (exclusive: boolean, fireAt: number): string => (exclusive ? 'x' : String(fireAt));

function prepare(db: SqliteDatabase) {
  return {
    record: db.prepare<
      [string, number],
      { owner: string; outcome: 'won' | 'busy'; token: number | null }
    >('SELECT owner, outcome, token FROM fleetcron_claims WHERE key = ? AND fire_at = ?'),
    insertRecord: db.prepare(
      'INSERT INTO fleetcron_claims (key, fire_at, owner, outcome, token, keep_until) VALUES (?, ?, ?, ?, ?, ?)',
    ),
    lease: db.prepare<[string, string], LeaseRow>(
      'SELECT * FROM fleetcron_leases WHERE key = ? AND slot = ?',
    ),
    nextToken: db.prepare<[string], { last_token: number }>(
      `INSERT INTO fleetcron_tokens (key, last_token) VALUES (?, 1)
       ON CONFLICT (key) DO UPDATE SET last_token = last_token + 1 RETURNING last_token`,
    ),
    putLease: db.prepare(
      `INSERT OR REPLACE INTO fleetcron_leases (key, slot, fire_at, owner, token, expires_at, exclusive)
       VALUES (?, ?, ?, ?, ?, ?, ?)`,
    ),
    extend: db.prepare<[number, string, string, number, number], LeaseRow>(
      `UPDATE fleetcron_leases SET expires_at = ?
       WHERE key = ? AND slot = ? AND token = ? AND expires_at > ? RETURNING *`,
    ),
    release: db.prepare<[string, string, number], { expires_at: number }>(
      'DELETE FROM fleetcron_leases WHERE key = ? AND slot = ? AND token = ? RETURNING expires_at',
    ),
    deleteRecord: db.prepare('DELETE FROM fleetcron_claims WHERE key = ? AND fire_at = ?'),
    collectKey: db.prepare('DELETE FROM fleetcron_claims WHERE key = ? AND keep_until < ?'),
    collectRecords: db.prepare(
      `DELETE FROM fleetcron_claims WHERE (key, fire_at) IN
       (SELECT key, fire_at FROM fleetcron_claims WHERE keep_until < ? LIMIT ${COLLECT_BATCH})`,
    ),
    collectLeases: db.prepare(
      `DELETE FROM fleetcron_leases WHERE (key, slot) IN
       (SELECT key, slot FROM fleetcron_leases WHERE expires_at <= ? LIMIT ${COLLECT_BATCH})`,
    ),
    leasesOf: db.prepare<[string, number], LeaseRow>(
      'SELECT * FROM fleetcron_leases WHERE key = ? AND expires_at > ? ORDER BY fire_at, slot',
    ),
    firesOf: db.prepare<
      [string],
      { fire_at: number; owner: string; outcome: 'won' | 'busy'; token: number | null }
    >('SELECT fire_at, owner, outcome, token FROM fleetcron_claims WHERE key = ? ORDER BY fire_at'),
    count: db.prepare<[], { n: number }>('SELECT count(*) AS n FROM fleetcron_claims'),
    mark: db.prepare<[string], { mark: number }>('SELECT mark FROM fleetcron_marks WHERE key = ?'),
    moveMark: db.prepare(
      `INSERT INTO fleetcron_marks (key, mark) VALUES (?, ?)
       ON CONFLICT (key) DO UPDATE SET mark = max(mark, excluded.mark)`,
    ),
  };
}

const statements = statementCache(prepare);

const toLease = (row: LeaseRow): Lease => ({
  key: row.key,
  fireAt: row.fire_at,
  owner: row.owner,
  token: row.token,
  expiresAt: row.expires_at,
  exclusive: row.exclusive === 1,
});

/**
 * The claim, inside its transaction. `now` is read once, from the host's clock, and returned as
 * the answer's `backendTime`.
 */
function claimIn(db: SqliteDatabase, args: ClaimArgs): ClaimResult {
  const now = Date.now();
  return { ...decide(db, args, now), backendTime: now };
}

/**
 * Many claims inside one transaction, in array order (two claims of one key see each other),
 * each decided exactly as {@link claimIn} decides it alone. `now` is read once: the whole batch
 * happens at one instant of the host's clock.
 */
function claimManyIn(db: SqliteDatabase, list: ClaimArgs[]): ClaimResult[] {
  const now = Date.now();
  return list.map((args) => ({ ...decide(db, args, now), backendTime: now }));
}

/** A renewal: the lease's new expiry if it is still live, else `null` (see `Lock.extend`). */
function extendIn(db: SqliteDatabase, args: ExtendArgs, now: number): Lease | null {
  const { lease } = args;
  const row = statements(db).extend.get(
    now + args.leaseMs,
    lease.key,
    slotOf(lease.exclusive, lease.fireAt),
    lease.token,
    now,
  );
  return row ? { ...toLease(row), backendTime: now } : null;
}

/** A release: deletes the lease if it still holds its token; `true` when it was still live. */
function releaseIn(db: SqliteDatabase, lease: Lease, now: number): boolean {
  const row = statements(db).release.get(
    lease.key,
    slotOf(lease.exclusive, lease.fireAt),
    lease.token,
  );
  return row !== undefined && row.expires_at > now;
}

function decide(db: SqliteDatabase, args: ClaimArgs, now: number): ClaimResult {
  const s = statements(db);
  const { key, fireAt, owner, leaseMs, exclusive, windowMs } = args;
  s.collectKey.run(key, now);
  const existing = s.record.get(key, fireAt);
  if (existing) {
    if (existing.owner !== owner) return { status: 'lost', key, fireAt, reason: 'claimed' };
    if (existing.outcome === 'busy') return { status: 'busy', key, fireAt };
    for (const slotExclusive of [true, false]) {
      const row = s.lease.get(key, slotOf(slotExclusive, fireAt));
      if (row && row.token === existing.token && row.expires_at > now) {
        return { status: 'won', lease: toLease(row) };
      }
    }
    return { status: 'lost', key, fireAt, reason: 'claimed' };
  }
  // Catch-up claims are bounded by their since instead of the window (the mark guards them).
  if (fireAt < (args.since ?? now - windowMs))
    return { status: 'lost', key, fireAt, reason: 'stale' };
  if (fireAt > now + args.earlyToleranceMs) return { status: 'lost', key, fireAt, reason: 'early' };
  if (args.since !== null) {
    const mark = s.mark.get(key)?.mark;
    if (mark !== undefined && fireAt <= mark) {
      // A re-sent catch-up claim whose record is collected: the owner's live lease of the fire.
      for (const slot of fireAt === mark ? ['x', String(fireAt)] : []) {
        const row = s.lease.get(key, slot);
        if (row && row.fire_at === fireAt && row.owner === owner && row.expires_at > now) {
          return { status: 'won', lease: toLease(row) };
        }
      }
      return { status: 'lost', key, fireAt, reason: 'behind_mark' };
    }
  }
  s.moveMark.run(key, fireAt);
  const keepUntil = fireAt + windowMs;
  if (exclusive) {
    const live = s.lease.get(key, 'x');
    if (live && live.expires_at > now) {
      s.insertRecord.run(key, fireAt, owner, 'busy', null, keepUntil);
      return { status: 'busy', key, fireAt };
    }
  }
  const token = (s.nextToken.get(key) as { last_token: number }).last_token;
  const lease: Lease = { key, fireAt, owner, token, expiresAt: now + leaseMs, exclusive };
  s.putLease.run(
    key,
    slotOf(exclusive, fireAt),
    fireAt,
    owner,
    token,
    lease.expiresAt,
    exclusive ? 1 : 0,
  );
  s.insertRecord.run(key, fireAt, owner, 'won', token, keepUntil);
  return { status: 'won', lease };
}

function withdrawIn(db: SqliteDatabase, lease: Lease): boolean {
  const s = statements(db);
  const record = s.record.get(lease.key, lease.fireAt);
  if (record?.outcome !== 'won' || record.token !== lease.token) return false;
  s.deleteRecord.run(lease.key, lease.fireAt);
  s.release.get(lease.key, slotOf(lease.exclusive, lease.fireAt), lease.token);
  return true;
}

function inspectIn(db: SqliteDatabase, key: string): LockInspection {
  const s = statements(db);
  const now = Date.now();
  s.collectKey.run(key, now);
  const fires: ClaimedFire[] = s.firesOf.all(key).map((r) => ({
    fireAt: r.fire_at,
    owner: r.owner,
    outcome: r.outcome,
    token: r.token,
  }));
  const leases = s.leasesOf.all(key, now).map(toLease);
  const mark = s.mark.get(key)?.mark ?? null;
  return { leases, newestFireAt: fires.at(-1)?.fireAt ?? null, fires, mark };
}

/**
 * The marks of `keys` in array order (`null` for a key without one), read in one read
 * transaction (one snapshot of the file), as {@link inspectIn} reads a key's mark; the host's
 * clock as `backendTime`.
 */
function readMarksIn(db: SqliteDatabase, keys: string[]): MarkReading {
  const s = statements(db);
  const marks = keys.map((key) => s.mark.get(key)?.mark ?? null);
  return { marks, backendTime: Date.now() };
}

/** Deletes one batch of records past their window and of expired leases; returns how many. */
function collectIn(db: SqliteDatabase): number {
  const s = statements(db);
  const now = Date.now();
  return s.collectRecords.run(now).changes + s.collectLeases.run(now).changes;
}

/** The lock's operation set, by name (see `SqliteLock`). */
export const lockOperations: SqliteOperations = {
  migrate(db) {
    db.exec(SQLITE_LOCK_SCHEMA);
  },
  ops: {
    claim: (db, args: ClaimArgs) => db.transaction(claimIn).immediate(db, args),
    claimMany: (db, list: ClaimArgs[]) => db.transaction(claimManyIn).immediate(db, list),
    extend: (db, args: ExtendArgs) => extendIn(db, args, Date.now()),
    extendMany: (db, list: ExtendArgs[]) =>
      db
        .transaction((items: ExtendArgs[]) => {
          const now = Date.now();
          return items.map((args) => extendIn(db, args, now));
        })
        .immediate(list),
    release: (db, lease: Lease) => releaseIn(db, lease, Date.now()),
    releaseMany: (db, list: Lease[]) =>
      db
        .transaction((items: Lease[]) => {
          const now = Date.now();
          return items.map((lease) => releaseIn(db, lease, now));
        })
        .immediate(list),
    withdraw: (db, lease: Lease) => db.transaction(withdrawIn).immediate(db, lease),
    inspect: (db, key: string) => db.transaction(inspectIn).immediate(db, key),
    readMarks: (db, keys: string[]) => db.transaction(readMarksIn).deferred(db, keys),
    collect: (db) => db.transaction(collectIn).immediate(db),
    count: (db) => (statements(db).count.get() as { n: number }).n,
  },
};
