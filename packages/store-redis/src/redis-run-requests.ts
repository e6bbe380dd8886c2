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
import { type RedisClient, type RedisCommands, RedisScript } from '@fleetcron/redis-shared';
import { ChannelSubscriber } from './channel-subscriber.js';
import type { FleetKeys } from './keys.js';
import type { RedisAudit } from './redis-audit.js';
import {
  DECIDE_RUN_REQUEST,
  GET_RUN_REQUEST,
  RELEASE_RUN_REQUEST,
  REQUEST_RUN,
  TAKE_RUN_REQUESTS,
} from './run-request-scripts.js';

const requestRunScript = new RedisScript(REQUEST_RUN);
const takeScript = new RedisScript(TAKE_RUN_REQUESTS);
const decideScript = new RedisScript(DECIDE_RUN_REQUEST);
const releaseScript = new RedisScript(RELEASE_RUN_REQUEST);
const getScript = new RedisScript(GET_RUN_REQUEST);

/** A run request as its record in the records hash holds it: every value a string. */
interface StoredRunRequest {
  seq: string;
  id: string;
  job: string;
  requestedBy: string;
  requestedAt: string;
  /** The payload as JSON text (`null` for requests written before payloads). */
  data: string;
  takes: string;
  takeId?: string;
  takenBy?: string;
  takenUntil?: string;
  decidedAt?: string;
  fireAt?: string;
  decidedBy?: string;
}

const numberOrNull = (text: string | undefined): number | null =>
  text === undefined ? null : Number(text);

/** The request fields of a stored record. */
function requestOf(stored: StoredRunRequest): RunRequest {
  const { id, job, requestedBy } = stored;
  const data = JSON.parse(stored.data) as JsonValue;
  return { id, job, requestedBy, requestedAt: Number(stored.requestedAt), data };
}

/**
 * The run requests of {@link RedisStore}, exactly once: one Lua script per operation on the
 * records hash, a sorted set of open requests per job (score: when a take may take it) and a
 * sorted set of decided ones, all under the hash tag `{prefix}`. Push through pub/sub.
 */
export class RedisRunRequests {
  private readonly subscriber: ChannelSubscriber;

  constructor(
    private readonly redis: RedisClient,
    private readonly commands: RedisCommands,
    private readonly keys: FleetKeys,
    private readonly audit: RedisAudit,
  ) {
    this.subscriber = new ChannelSubscriber(redis, keys.channel);
  }

  async requestRun(input: RunRequestInput): Promise<RunRequest> {
    const request = newRunRequest(input, 0);
    const audit = this.audit.tail(runRequestAuditRecord(request, input.note));
    const keys = [
      this.keys.sequence,
      this.keys.requestRecords,
      this.keys.openRequests(request.job),
      ...audit.keys,
    ];
    const args = [request.id, request.job, request.requestedBy, JSON.stringify(request.data)];
    const at = await this.commands.call('requestRun', () =>
      requestRunScript.run(this.redis, keys, [...args, this.keys.channel, ...audit.args]),
    );
    return { ...request, requestedAt: Number(at) };
  }

  async takeRunRequests(
    jobs: readonly string[],
    instanceId: string,
    options?: TakeRunRequestsOptions,
  ): Promise<TakenRunRequest[]> {
    const leaseMs = takeLeaseMs(options);
    if (jobs.length === 0) return [];
    const keys = [this.keys.requestRecords, this.keys.decidedRequests];
    for (const job of new Set(jobs))
      keys.push(this.keys.openRequests(job), this.keys.requests(job));
    const taken = (await this.commands.call('takeRunRequests', () =>
      takeScript.run(this.redis, keys, [leaseMs, instanceId, randomUUID()]),
    )) as string[];
    return taken
      .map((raw) => JSON.parse(raw) as StoredRunRequest)
      .sort((a, b) => Number(a.seq) - Number(b.seq))
      .map((stored) => ({
        ...requestOf(stored),
        takeId: stored.takeId!,
        takenUntil: Number(stored.takenUntil),
        takes: Number(stored.takes),
      }));
  }

  async decideRunRequest(
    id: string,
    takeId: string,
    decision: RunRequestDecision,
  ): Promise<boolean> {
    const keys = [this.keys.requestRecords, this.keys.decidedRequests];
    const args = [id, takeId, String(decision.fireAt), decision.instanceId];
    const decided = await this.commands.call('decideRunRequest', () =>
      decideScript.run(this.redis, keys, args),
    );
    return Number(decided) === 1;
  }

  async releaseRunRequest(id: string, takeId: string): Promise<void> {
    // The job (which names the open set, a key the script must declare) never changes: read it
    // first; the script checks the take and the job again atomically.
    const raw = await this.commands.call('releaseRunRequest', () =>
      this.redis.hget(this.keys.requestRecords, id),
    );
    if (raw === null) return;
    const { job } = JSON.parse(raw) as StoredRunRequest;
    const keys = [this.keys.requestRecords, this.keys.openRequests(job)];
    await this.commands.call('releaseRunRequest', () =>
      releaseScript.run(this.redis, keys, [id, takeId, job, this.keys.channel]),
    );
  }

  async getRunRequest(id: string): Promise<RunRequestState | null> {
    const [now, raw] = (await this.commands.call('getRunRequest', () =>
      getScript.run(this.redis, [this.keys.requestRecords], [id]),
    )) as [number, string];
    if (raw === '') return null;
    const stored = JSON.parse(raw) as StoredRunRequest;
    const takenUntil = numberOrNull(stored.takenUntil);
    const decidedAt = numberOrNull(stored.decidedAt);
    return {
      ...requestOf(stored),
      state: runRequestPhase({ decidedAt, takenUntil }, Number(now)),
      ...{ takes: Number(stored.takes), takenBy: stored.takenBy ?? null, takenUntil, decidedAt },
      ...{ fireAt: numberOrNull(stored.fireAt), decidedBy: stored.decidedBy ?? null },
    };
  }

  watchRunRequests(listener: (job: string) => void): () => void {
    return this.subscriber.subscribe(listener);
  }

  close(): void {
    this.subscriber.stop();
  }
}
