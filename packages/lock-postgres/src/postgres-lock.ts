import {
  BackendUnavailableError,
  type BatchOptions,
  type ClaimedFire,
  type ClaimRequest,
  type ClaimResult,
  InvalidOptionError,
  type Lease,
  type Lock,
  type LockCapabilities,
  type LockInspection,
  type MarkReading,
} from '@fleetcron/core';
import {
  assertBatchSize,
  assertClaimRequest,
  assertLockKey,
  DEFAULT_EARLY_TOLERANCE_MS,
} from '@fleetcron/core/backend';
import {
  assertPool,
  decodeText,
  encodeText,
  type RunOptions,
  StatementSet,
} from '@fleetcron/postgres-shared';
import type { Pool, QueryResultRow } from 'pg';
import { type ClaimRow, claimResult } from './claim.js';
import { type ClaimManyReply, claimManyArrays } from './claim-many.js';
import { parseClaimManyReply } from './claim-many-reply.js';
import { type InlineArgument, inlineCall } from './inline-call.js';
import {
  type ExtendManyRow,
  hasRepeatedLease,
  leaseArrays,
  type ReleaseManyRow,
} from './lease-batches.js';
import {
  type PostgresLockOptions,
  type ResolvedLockOptions,
  resolveLockOptions,
} from './options.js';
import { type LockTables, lockTables, postgresLockSchema } from './schema.js';
import {
  type InspectRow,
  type LeaseRow,
  type LockStatement,
  lockStatements,
  type ReadMarksRow,
} from './statements.js';

/** Most claims (and lease renewals or releases) one batched call takes: see the README. */
export const POSTGRES_MAX_BATCH = 1000;

/**
 * What {@link PostgresLock} declares: millisecond leases, judged by the database's `now()`;
 * durable, since claim records, leases and token counters are committed rows; claims more than
 * `earlyToleranceMs` (option, default 250) ahead of `now()` are refused `early`; the catch-up
 * mark is a column of the key's row, so it is durable too; batches of up to
 * {@link POSTGRES_MAX_BATCH} claims in one statement.
 */
export const POSTGRES_LOCK_CAPABILITIES: Readonly<LockCapabilities> = Object.freeze({
  minLeaseMs: 1,
  leaseGranularityMs: 1,
  durable: true,
  clock: 'backend',
  earlyToleranceMs: DEFAULT_EARLY_TOLERANCE_MS,
  durableMark: true,
  maxBatch: POSTGRES_MAX_BATCH,
});

/**
 * A {@link Lock} on PostgreSQL. Each claim is one call of a PL/pgSQL function (created by
 * `migrate()`) in its own implicit transaction, judged by the database's `now()`: it atomically
 * writes the fire's claim record, the key's fencing-token counter and the lease. No session
 * state the client relies on, no named prepared statements by default: it works through
 * transaction-mode poolers.
 *
 * Takes a `pg.Pool` you own (never closes it). Run {@link PostgresLock.migrate} once (or apply
 * {@link postgresLockSchema} with your migration tool) before claiming.
 */
export class PostgresLock implements Lock {
  readonly backend = 'postgres';
  readonly capabilities: LockCapabilities;
  readonly windowMs: number;
  private readonly options: ResolvedLockOptions;
  private readonly statements: StatementSet<LockStatement>;
  private readonly tables: LockTables;

  /** Validates `options` (throws `InvalidOptionError` naming the field); runs no query. */
  constructor(pool: Pool, options: PostgresLockOptions = {}) {
    assertPool(pool);
    this.options = resolveLockOptions(options);
    this.windowMs = this.options.windowMs;
    this.capabilities = {
      ...POSTGRES_LOCK_CAPABILITIES,
      earlyToleranceMs: this.options.earlyToleranceMs,
    };
    this.tables = lockTables(this.options.schema, this.options.table);
    this.statements = new StatementSet(
      pool,
      this.backend,
      this.options,
      lockStatements(this.tables),
    );
  }

  /**
   * Creates the schema and tables when missing and (re)creates the claim function (idempotent;
   * safe to run from every instance at start-up: concurrent runs queue on an advisory lock). Throws `BackendUnavailableError` when the database cannot be reached.
   */
  async migrate(): Promise<void> {
    await this.statements.migrate(postgresLockSchema(this.options));
  }

  async claim(request: ClaimRequest): Promise<ClaimResult> {
    assertIntegerMs('fireAt', request.fireAt);
    assertClaimRequest(request);
    const deadline = this.statements.deadline();
    const values = [
      encodeText(request.key),
      request.fireAt,
      encodeText(request.owner),
      Math.ceil(request.leaseMs),
      request.exclusive,
      this.windowMs,
      Math.ceil(this.options.statementTimeoutMs), // row-lock wait bound: see README
      this.options.earlyToleranceMs,
      request.catchUp?.since ?? null,
    ];
    // One round trip: the claim function locks, re-reads and decides on the server, so a claim
    // never runs twice. Safe to repeat after a broken connection: the same owner gets a replay.
    // Once request.signal is aborted it is neither sent nor repeated (README, "A claim given up
    // on").
    const options = { retry: true, deadline, signal: request.signal };
    const [row] = await this.call<ClaimRow>('claim', 'claim', values, options);
    if (!row) throw new BackendUnavailableError(this.backend, 'claim', new Error('no result row'));
    return claimResult(request, row);
  }

  /**
   * Claims many fires with one call of the batch claim function: one round trip, one
   * transaction, each request answered by the claim function as {@link claim} would answer it
   * (see {@link Lock.claimMany} and the README, "Batched claims"). Re-sent once after a broken
   * connection, like a single claim; once `options.signal` is aborted it is neither sent nor
   * re-sent.
   */
  async claimMany(
    requests: readonly ClaimRequest[],
    options: BatchOptions = {},
  ): Promise<ClaimResult[]> {
    assertBatchSize(requests, POSTGRES_MAX_BATCH);
    for (const request of requests) {
      assertIntegerMs('fireAt', request.fireAt);
      assertClaimRequest(request);
    }
    if (requests.length === 0) return [];
    const deadline = this.statements.deadline();
    const values = [
      ...claimManyArrays(requests),
      this.windowMs,
      Math.ceil(this.options.statementTimeoutMs),
      this.options.earlyToleranceMs,
    ];
    const [reply] = await this.statements.run<ClaimManyReply>('claimMany', 'claimMany', values, {
      retry: true,
      deadline,
      signal: options.signal,
    });
    const results = parseClaimManyReply(
      requests,
      reply?.answers ?? null,
      Number(reply?.now_ms ?? Number.NaN),
    );
    if (!results) {
      throw new BackendUnavailableError(this.backend, 'claimMany', new Error('malformed reply'));
    }
    return results;
  }

  /**
   * Renews many leases in one statement (see {@link Lock.extendMany}). A batch naming one lease
   * twice is answered lease by lease (a statement renews a row once).
   */
  async extendMany(
    leases: readonly Lease[],
    leaseMs: readonly number[],
    options: BatchOptions = {},
  ): Promise<(Lease | null)[]> {
    assertBatchSize(leases, POSTGRES_MAX_BATCH);
    if (leaseMs.length !== leases.length) {
      throw new InvalidOptionError(
        'leaseMs',
        `must hold one duration per lease (${leases.length}), got ${leaseMs.length}`,
      );
    }
    if (leases.length === 0) return [];
    if (hasRepeatedLease(leases)) {
      const results: (Lease | null)[] = [];
      for (const [i, lease] of leases.entries()) {
        if (options.signal?.aborted) {
          throw new BackendUnavailableError(this.backend, 'extendMany', new Error('given up'));
        }
        results.push(await this.extend(lease, leaseMs[i] ?? 0));
      }
      return results;
    }
    const values = [...leaseArrays(leases), leaseMs.map((ms) => Math.ceil(ms))];
    const rows = await this.statements.run<ExtendManyRow>('extendMany', 'extendMany', values, {
      retry: true,
      signal: options.signal,
    });
    const results: (Lease | null)[] = leases.map(() => null);
    for (const row of rows) {
      const i = Number(row.ord) - 1;
      const lease = leases[i];
      if (lease) results[i] = renewedLease(lease, row);
    }
    return results;
  }

  /**
   * Ends many leases in one statement (see {@link Lock.releaseMany}); a lease named twice is
   * released once (the repeats answer `false`, as a second release would). Not re-sent after a
   * broken connection (a second run would answer `false`).
   */
  async releaseMany(leases: readonly Lease[], options: BatchOptions = {}): Promise<boolean[]> {
    assertBatchSize(leases, POSTGRES_MAX_BATCH);
    if (leases.length === 0) return [];
    const rows = await this.statements.run<ReleaseManyRow>(
      'releaseMany',
      'releaseMany',
      leaseArrays(leases),
      { signal: options.signal },
    );
    const results = leases.map(() => false);
    for (const row of rows) results[Number(row.ord) - 1] = row.live === true;
    return results;
  }

  async extend(lease: Lease, leaseMs: number): Promise<Lease | null> {
    const values = [
      encodeText(lease.key),
      lease.fireAt,
      lease.token,
      lease.exclusive,
      Math.ceil(leaseMs),
    ];
    const [row] = await this.call<LeaseRow>('extend', 'extend', values, { retry: true });
    return row ? renewedLease(lease, row) : null;
  }

  async release(lease: Lease): Promise<boolean> {
    const values = [encodeText(lease.key), lease.fireAt, lease.token, lease.exclusive];
    // Not repeated after a broken connection: a second release would answer false.
    const [row] = await this.call<{ live: boolean }>('release', 'release', values, {});
    return row?.live === true;
  }

  /**
   * Calls the lock's function `fn` (`claim`, `extend` or `release`) with `values`: as the named prepared
   * statement with `preparedStatements`, else as one simple-protocol query with the values
   * inline (no parse message, no bind: the cheapest unprepared round trip).
   */
  private call<R extends QueryResultRow>(
    operation: string,
    fn: 'claim' | 'extend' | 'release',
    values: InlineArgument[],
    options: RunOptions,
  ): Promise<R[]> {
    if (this.options.preparedStatements)
      return this.statements.run<R>(operation, fn, values, options);
    const text = inlineCall(this.tables[fn], values);
    return this.statements.runner.query<R>(operation, text, undefined, options);
  }

  /**
   * Hands back a won claim that will never run: one statement deletes the fire's claim record
   * and the lease when they still hold `lease.token` (see {@link Lock.withdraw}). Not repeated
   * after a broken connection (a second run would answer false).
   */
  async withdraw(lease: Lease): Promise<boolean> {
    const rows = await this.statements.run<{ withdrawn: boolean }>('withdraw', 'withdraw', [
      encodeText(lease.key),
      lease.fireAt,
      lease.token,
    ]);
    return rows[0]?.withdrawn === true;
  }

  async inspect(key: string): Promise<LockInspection> {
    assertLockKey(key);
    const rows = await this.statements.run<InspectRow>(
      'inspect',
      'inspect',
      [encodeText(key), this.windowMs],
      {
        retry: true,
      },
    );
    const fires: ClaimedFire[] = [];
    const leases: Lease[] = [];
    let mark: number | null = null;
    for (const row of rows) {
      const fireAt = Number(row.fire_at);
      if (row.kind === 'mark') {
        mark = fireAt;
        continue;
      }
      const owner = decodeText(row.owner);
      const token = row.token === null ? null : Number(row.token);
      if (row.kind === 'fire') {
        fires.push({ fireAt, owner, outcome: row.outcome ?? 'won', token });
      } else {
        leases.push({
          key,
          fireAt,
          owner,
          token: token ?? 0,
          expiresAt: Number(row.expires_at),
          exclusive: row.kind === 'exclusive',
        });
      }
    }
    fires.sort((a, b) => a.fireAt - b.fireAt);
    leases.sort((a, b) => a.fireAt - b.fireAt);
    return { leases, newestFireAt: fires.at(-1)?.fireAt ?? null, fires, mark };
  }

  /**
   * Reads the marks of many keys in one statement (one round trip, any number of keys: they go
   * as one `text[]` parameter), with the database's `now()` as `backendTime` (see
   * {@link Lock.readMarks}). Every key is checked before anything is sent; re-sent once after a
   * broken connection (a read); once `options.signal` is aborted it is neither sent nor re-sent.
   */
  async readMarks(keys: readonly string[], options: BatchOptions = {}): Promise<MarkReading> {
    if (!Array.isArray(keys)) {
      throw new InvalidOptionError('keys', `must be an array of keys, got ${typeof keys}`);
    }
    for (const key of keys) assertLockKey(key);
    if (keys.length === 0) return { marks: [] };
    const [row] = await this.statements.run<ReadMarksRow>(
      'readMarks',
      'readMarks',
      [keys.map(encodeText)],
      { retry: true, signal: options.signal },
    );
    const backendTime = Number(row?.now_ms);
    if (!row || !Array.isArray(row.marks) || row.marks.length !== keys.length) {
      const got = row ? `${Array.isArray(row.marks) ? row.marks.length : 'no'} marks` : 'no row';
      const cause = new Error(`malformed reply: ${got} for ${keys.length} keys`);
      throw new BackendUnavailableError(this.backend, 'readMarks', cause);
    }
    const marks = row.marks.map((mark) => (mark === null ? null : Number(mark)));
    return { marks, backendTime };
  }

  /** Nothing to free: the lock holds no timers or connections of its own (the pool is yours). */
  async close(): Promise<void> {}
}

/** The lease a renewal statement returned for `lease`, or `null` when it was not renewed. */
function renewedLease(lease: Lease, row: LeaseRow): Lease | null {
  if (row.token === null || row.owner === null) return null;
  return {
    key: lease.key,
    fireAt: Number(row.fire_at),
    owner: decodeText(row.owner),
    token: Number(row.token),
    expiresAt: Number(row.expires_at),
    exclusive: lease.exclusive,
    backendTime: Number(row.now_ms),
  };
}

function assertIntegerMs(field: string, value: number): void {
  if (!Number.isSafeInteger(value)) {
    throw new InvalidOptionError(field, `must be an integer epoch ms, got ${String(value)}.`);
  }
}
