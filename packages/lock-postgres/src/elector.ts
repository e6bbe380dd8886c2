import {
  BackendUnavailableError,
  type CampaignRequest,
  type CampaignResult,
  type Elector,
  type ElectorCapabilities,
  type LeaderInfo,
} from '@fleetcron/core';
import { assertCampaign } from '@fleetcron/core/backend';
import { assertPool, decodeText, encodeText, StatementSet } from '@fleetcron/postgres-shared';
import type { Pool } from 'pg';
import {
  type ElectorStatement,
  electionsTable,
  electorStatements,
  type PostgresElectorOptions,
  postgresElectorSchema,
  type ResolvedElectorOptions,
  resolveElectorOptions,
} from './elector-schema.js';

/** What {@link PostgresElector} declares: ms TTLs judged by `now()`; durable (committed rows). */
export const POSTGRES_ELECTOR_CAPABILITIES: Readonly<ElectorCapabilities> = Object.freeze({
  minTtlMs: 1,
  ttlGranularityMs: 1,
  durable: true,
  clock: 'backend',
});

interface CampaignRow {
  status: 'elected' | 'follower';
  term: string;
  expires_at: string;
  leader: string | null;
  now_ms: string;
}

/**
 * An {@link Elector} on PostgreSQL: one row per election, each step one statement in its own
 * implicit transaction, judged by the database's `now()`. Terms come from the row's counter,
 * so they strictly increase across leaders and restarts. Takes a `pg.Pool` you own (never
 * closed here); run {@link PostgresElector.migrate} once (or apply {@link postgresElectorSchema}).
 * Works through transaction-mode poolers unless `preparedStatements` is on.
 */
export class PostgresElector implements Elector {
  readonly backend = 'postgres';
  readonly capabilities: ElectorCapabilities = { ...POSTGRES_ELECTOR_CAPABILITIES };
  private readonly options: ResolvedElectorOptions;
  private readonly statements: StatementSet<ElectorStatement>;

  /** Validates `options` (throws `InvalidOptionError` naming the field); runs no query. */
  constructor(pool: Pool, options: PostgresElectorOptions = {}) {
    assertPool(pool);
    this.options = resolveElectorOptions(options);
    const table = electionsTable(this.options.schema, this.options.table);
    this.statements = new StatementSet(pool, this.backend, this.options, electorStatements(table));
  }

  /** Creates the schema and the elections table when missing (idempotent). */
  async migrate(): Promise<void> {
    await this.statements.migrate(postgresElectorSchema(this.options));
  }

  async campaign(request: CampaignRequest): Promise<CampaignResult> {
    assertCampaign(request, this.capabilities, this.backend);
    const { election, id } = request;
    // Safe to repeat after a broken connection: a repeat by the same id starts another term,
    // never a second leader. Once request.signal is aborted it is neither sent nor repeated.
    const [row] = await this.statements.run<CampaignRow>(
      'campaign',
      'campaign',
      [encodeText(election), encodeText(id), Math.ceil(request.ttlMs)],
      { retry: true, signal: request.signal },
    );
    if (!row) throw new BackendUnavailableError(this.backend, 'campaign', new Error('no row'));
    const now = Number(row.now_ms);
    const leader: LeaderInfo = {
      election,
      id: row.leader === null ? '' : decodeText(row.leader),
      term: Number(row.term ?? 0),
      // a resigned row read by a racing follower has no expiry: try again right away
      expiresAt: row.expires_at === null ? now : Number(row.expires_at),
    };
    if (row.status === 'elected') return { status: 'elected', leader };
    return { status: 'follower', leader, now };
  }

  async renew(term: LeaderInfo, ttlMs: number): Promise<LeaderInfo | null> {
    const [row] = await this.statements.run<{ expires_at: string }>(
      'renew',
      'renew',
      [encodeText(term.election), term.term, encodeText(term.id), Math.ceil(ttlMs)],
      { retry: true },
    );
    return row ? { ...term, expiresAt: Number(row.expires_at) } : null;
  }

  async resign(term: LeaderInfo): Promise<boolean> {
    const [row] = await this.statements.run<{ live: boolean }>('resign', 'resign', [
      encodeText(term.election),
      term.term,
    ]);
    return row?.live === true;
  }

  async leader(election: string): Promise<LeaderInfo | null> {
    const [row] = await this.statements.run<{ leader: string; term: string; expires_at: string }>(
      'leader',
      'leader',
      [encodeText(election)],
      { retry: true },
    );
    if (!row) return null;
    return {
      election,
      id: decodeText(row.leader),
      term: Number(row.term),
      expiresAt: Number(row.expires_at),
    };
  }

  /** Nothing to free: the elector holds no timers or connections of its own (the pool is yours). */
  async close(): Promise<void> {}
}
