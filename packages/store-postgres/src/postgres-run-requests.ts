import { randomUUID } from 'node:crypto';
import type {
  JsonValue,
  RunRequest,
  RunRequestDecision,
  RunRequestInput,
  RunRequestState,
  TakenRunRequest,
  TakeRunRequestsOptions,
} from '@fleetcron/core';
import {
  newRunRequest,
  runRequestAuditRecord,
  runRequestPhase,
  takeLeaseMs,
} from '@fleetcron/core/backend';
import { decodeText, encodeText, type StatementSet } from '@fleetcron/postgres-shared';
import { auditParameters } from './audit-statements.js';
import type { ResolvedStoreOptions } from './options.js';
import type { RunRequestRow, RunRequestStatement } from './run-request-statements.js';

/**
 * The run requests of `PostgresStore`, exactly once, on the database clock (`clock_timestamp()`):
 * a take holds a request (take id, lease) instead of deleting it; its taker decides it (a
 * compare-and-set on the take id that moves it to the decisions table) or releases it; decided
 * requests are kept `DECIDED_RUN_REQUEST_KEEP_MS`, then collected by takes. A new or released
 * request NOTIFYs `channel` with its job.
 */
export class PostgresRunRequests {
  constructor(
    private readonly statements: StatementSet<RunRequestStatement>,
    private readonly channel: string,
    private readonly audit: ResolvedStoreOptions['audit'],
  ) {}

  /**
   * Inserts the request, appends its `run` audit entry and NOTIFYs listeners in one statement
   * (never retried: no duplicate).
   */
  async requestRun(input: RunRequestInput): Promise<RunRequest> {
    const request = newRunRequest(input, 0);
    const record = runRequestAuditRecord(request, input.note);
    const [row] = await this.statements.run<{ requested_at: string }>('requestRun', 'requestRun', [
      request.id,
      encodeText(request.job),
      encodeText(request.requestedBy),
      this.channel,
      request.data === null ? null : JSON.stringify(request.data),
      ...auditParameters(record, this.audit),
    ]);
    return { ...request, requestedAt: Number(row?.requested_at) };
  }

  /**
   * One `UPDATE … WHERE id IN (SELECT … FOR UPDATE SKIP LOCKED)`: no two takes hold a request at
   * once. Repeated once when the connection broke under it: requests a lost first attempt took
   * stay held by that take until its lease ends, then any instance takes them.
   */
  async takeRunRequests(
    jobs: readonly string[],
    instanceId: string,
    options?: TakeRunRequestsOptions,
  ): Promise<TakenRunRequest[]> {
    const leaseMs = takeLeaseMs(options);
    if (jobs.length === 0) return [];
    const rows = await this.statements.run<RunRequestRow>(
      'takeRunRequests',
      'takeRunRequests',
      [jobs.map(encodeText), encodeText(instanceId), leaseMs, randomUUID()],
      { retry: true },
    );
    return rows
      .sort((a, b) => Number(a.seq) - Number(b.seq))
      .map((row) => ({
        ...toRunRequest(row),
        takeId: row.take_id ?? '',
        takenUntil: Number(row.taken_until),
        takes: row.takes,
      }));
  }

  /**
   * A compare-and-set on the take id: one statement moves the request to the decisions while
   * `takeId` is its current take; when it moved nothing, a second reads whether this take decided
   * it already (a retry after a lost reply: `true` again). Safe to repeat (same answer).
   */
  async decideRunRequest(
    id: string,
    takeId: string,
    decision: RunRequestDecision,
  ): Promise<boolean> {
    const key = [encodeText(id), encodeText(takeId)];
    const moved = await this.statements.run(
      'decideRunRequest',
      'decideRunRequest',
      [...key, decision.fireAt, encodeText(decision.instanceId)],
      { retry: true },
    );
    if (moved.length > 0) return true;
    const decided = await this.statements.run('decideRunRequest', 'decidedByTake', key, {
      retry: true,
    });
    return decided.length > 0;
  }

  /** Clears the take's lease and NOTIFYs the job in one statement; safe to repeat. */
  async releaseRunRequest(id: string, takeId: string): Promise<void> {
    await this.statements.run(
      'releaseRunRequest',
      'releaseRunRequest',
      [encodeText(id), encodeText(takeId), this.channel],
      { retry: true },
    );
  }

  /** The request's row with its phase at the database clock, or `null`. */
  async getRunRequest(id: string): Promise<RunRequestState | null> {
    const [row] = await this.statements.run<RunRequestRow & { now: string }>(
      'getRunRequest',
      'getRunRequest',
      [encodeText(id)],
      { retry: true },
    );
    if (!row) return null;
    const takenUntil = toNumber(row.taken_until);
    const decidedAt = toNumber(row.decided_at);
    return {
      ...toRunRequest(row),
      state: runRequestPhase({ decidedAt, takenUntil }, Number(row.now)),
      takes: row.takes,
      takenBy: row.taken_by === null ? null : decodeText(row.taken_by),
      takenUntil,
      decidedAt,
      fireAt: toNumber(row.fire_at),
      decidedBy: row.decided_by === null ? null : decodeText(row.decided_by),
    };
  }
}

function toRunRequest(row: RunRequestRow): RunRequest {
  return {
    id: decodeText(row.id),
    job: decodeText(row.job),
    requestedBy: decodeText(row.requested_by),
    requestedAt: Number(row.requested_at),
    data: row.data === null ? null : (JSON.parse(row.data) as JsonValue),
  };
}

function toNumber(value: string | null): number | null {
  return value === null ? null : Number(value);
}
