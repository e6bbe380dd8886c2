import { randomUUID } from 'node:crypto';
import {
  BackendUnavailableError,
  type RunRequest,
  type RunRequestDecision,
  type RunRequestInput,
  type RunRequestState,
  type TakenRunRequest,
  type TakeRunRequestsOptions,
} from '@fleetcron/core';
import {
  DECIDED_RUN_REQUEST_KEEP_MS,
  newRunRequest,
  runRequestAuditRecord,
  runRequestPhase,
  takeLeaseMs,
} from '@fleetcron/core/backend';
import { BACKEND, callEtcd } from '@fleetcron/etcd-shared';
import type { Etcd3, IKeyValue, IRequestOp, Watcher } from 'etcd3';
import type { EtcdAudit } from './etcd-audit.js';
import { prefixEnd } from './etcd-fleet.js';
import { fromKeyPart, type StoreKeys } from './keys.js';
import type { ResolvedStoreOptions } from './options.js';
import {
  decodeRunRequestRecord,
  encodeRunRequestRecord,
  isWaiting,
  newRunRequestRecord,
  type RunRequestRecord,
  stateOf,
  takenOf,
} from './run-request-record.js';

/** Most decided requests one take collects (bounded work per call). */
const COLLECT_PER_TAKE = 32;

/** Most value bytes in one take transaction (etcd refuses requests over 1.5 MiB by default). */
const MAX_TXN_BYTES = 1024 * 1024;

/**
 * Most requests one read of a take returns (48 × 64 KiB of `data` stays under gRPC's 4 MiB
 * answer limit); more are read in further rounds.
 */
const READ_PAGE = 48;

/** Transactions a decide or release tries while the request changes under it. */
const WRITE_ATTEMPTS = 5;

/** A stored request as read: its key, record and `mod_revision`. */
interface Read {
  key: string;
  record: RunRequestRecord;
  modRevision: string;
}

/** One nested transaction of a take: its operation and what it holds when it succeeds. */
interface TakeOp {
  op: IRequestOp;
  bytes: number;
  taken: TakenRunRequest | null;
}

/**
 * The run requests of {@link EtcdStore}, exactly once. Each request is one key holding the
 * request, its last take and its decision; every change is a transaction comparing the key's
 * `mod_revision` with the one read, so of two writers from one read exactly one wins. A take
 * reads the jobs' requests and sends one transaction of nested transactions, one per request
 * it wants (each compares and puts on its own: a request another take changed meanwhile is
 * left out, the others are held). etcd has no clock a client can read: `takenUntil`,
 * `decidedAt` and whether a take's lease has ended are judged on the writer's clock
 * (`options.clock`), as `requestedAt` is.
 */
export class EtcdRunRequests {
  private readonly watchers = new Set<(job: string) => void>();
  private watcher: Promise<Watcher | null> | null = null;

  constructor(
    private readonly client: Etcd3,
    private readonly keys: StoreKeys,
    private readonly options: ResolvedStoreOptions,
    private readonly audit: EtcdAudit,
  ) {}

  /**
   * Puts the request under `r/<job>/<requestedAt>:<id>`, its id index and its `run` audit entry,
   * in one transaction; watchers hear of it.
   */
  async requestRun(input: RunRequestInput): Promise<RunRequest> {
    const request = newRunRequest(input, this.options.clock.now());
    const audit = this.audit.puts(runRequestAuditRecord(request, input.note), request.requestedAt);
    const key = this.keys.runRequest(request.job, request.requestedAt, request.id);
    const value = encodeRunRequestRecord(newRunRequestRecord(request));
    await this.call('requestRun', (o) =>
      this.client.kv.txn(
        {
          compare: [],
          success: [put(key, value), put(this.keys.requestIndex(request.id), key), ...audit],
          failure: [],
        },
        o,
      ),
    );
    await this.audit.prune(request.requestedAt);
    return request;
  }

  /**
   * One read of the jobs' requests, then one transaction per `maxTxnOps` requests (and 1 MiB)
   * of nested compare-and-put transactions: each pending request this take won is returned,
   * oldest first. Requests decided more than {@link DECIDED_RUN_REQUEST_KEEP_MS} ago are
   * deleted on the way (a few per take).
   */
  async takeRunRequests(
    jobs: readonly string[],
    instanceId: string,
    options?: TakeRunRequestsOptions,
  ): Promise<TakenRunRequest[]> {
    const leaseMs = takeLeaseMs(options);
    if (jobs.length === 0) return [];
    const prefixes = [...new Set(jobs)].map((job) => this.keys.requests(job));
    const read = await this.readRequests(prefixes);
    const now = this.options.clock.now();
    const reads = read.sort((a, b) => compareText(memberOf(a.key), memberOf(b.key)));
    const ops: TakeOp[] = [];
    let collected = 0;
    for (const stored of reads) {
      const phase = runRequestPhase(stored.record, now);
      if (phase === 'pending') ops.push(this.takeOp(stored, instanceId, now + leaseMs));
      else if (
        phase === 'decided' &&
        collected < COLLECT_PER_TAKE &&
        now - (stored.record.decidedAt ?? now) > DECIDED_RUN_REQUEST_KEEP_MS
      ) {
        collected++;
        ops.push(this.collectOp(stored));
      }
    }
    const results = await Promise.all(
      chunks(ops, this.options.maxTxnOps).map(async (chunk) => {
        const response = await this.call('takeRunRequests', (o) =>
          this.client.kv.txn({ compare: [], success: chunk.map((t) => t.op), failure: [] }, o),
        );
        return chunk.map((t, i) =>
          response.responses[i]?.response_txn?.succeeded ? t.taken : null,
        );
      }),
    );
    return results.flat().filter((t): t is TakenRunRequest => t !== null);
  }

  /**
   * Compare-and-put of the decision while `takeId` is the current take and nothing decided the
   * request; `true` without writing when this take decided it already (a retry after a lost
   * reply).
   */
  async decideRunRequest(
    id: string,
    takeId: string,
    decision: RunRequestDecision,
  ): Promise<boolean> {
    for (let attempt = 1; attempt <= WRITE_ATTEMPTS; attempt++) {
      const stored = await this.locate('decideRunRequest', id);
      if (!stored || stored.record.takeId !== takeId) return false;
      if (stored.record.decidedAt !== null) return true;
      const decided: RunRequestRecord = {
        ...stored.record,
        ...{ decidedAt: this.options.clock.now(), fireAt: decision.fireAt },
        decidedBy: decision.instanceId,
      };
      if (await this.putIfUnchanged('decideRunRequest', stored, decided)) return true;
    }
    throw contended('decideRunRequest', id);
  }

  /**
   * Compare-and-put of `takenUntil: null` while `takeId` is the current take and the request is
   * not decided; the put wakes watchers as a new request does. A no-op otherwise.
   */
  async releaseRunRequest(id: string, takeId: string): Promise<void> {
    for (let attempt = 1; attempt <= WRITE_ATTEMPTS; attempt++) {
      const stored = await this.locate('releaseRunRequest', id);
      if (!stored || stored.record.takeId !== takeId || stored.record.decidedAt !== null) return;
      const released = { ...stored.record, takenUntil: null };
      if (await this.putIfUnchanged('releaseRunRequest', stored, released)) return;
    }
    throw contended('releaseRunRequest', id);
  }

  /** The request's state on this writer's clock, or `null` (unknown, or collected). */
  async getRunRequest(id: string): Promise<RunRequestState | null> {
    const stored = await this.locate('getRunRequest', id);
    return stored ? stateOf(stored.record, this.options.clock.now()) : null;
  }

  /**
   * Push capability: an etcd watch on the run-request prefix (made on first use); a put of a
   * request that waits (new, or released) calls the listeners with its job.
   */
  watchRunRequests(listener: (job: string) => void): () => void {
    this.watchers.add(listener);
    this.watcher ??= this.watch();
    return () => {
      this.watchers.delete(listener);
      if (this.watchers.size === 0) this.stopWatching();
    };
  }

  /** Cancels the watch, if any. */
  close(): void {
    this.watchers.clear();
    this.stopWatching();
  }

  /**
   * Every request under `prefixes`: one transaction of one range per prefix, each limited so
   * the whole answer holds at most {@link READ_PAGE} requests; ranges with more are read on in
   * further rounds (each request is compared again when written, so no snapshot is needed).
   */
  private async readRequests(prefixes: readonly string[]): Promise<Read[]> {
    const reads: Read[] = [];
    let ranges = prefixes.map((p) => ({ from: Buffer.from(p), end: prefixEnd(Buffer.from(p)) }));
    while (ranges.length > 0) {
      const limit = Math.max(1, Math.floor(READ_PAGE / ranges.length));
      const page = ranges;
      const response = await this.call('takeRunRequests', (o) =>
        this.client.kv.txn(
          {
            compare: [],
            success: page.map((r) => ({
              request_range: { key: r.from, range_end: r.end, limit },
            })),
            failure: [],
          },
          o,
        ),
      );
      ranges = [];
      response.responses.forEach((r, i) => {
        const kvs = r.response_range?.kvs ?? [];
        reads.push(...kvs.map(readOf));
        const last = kvs.at(-1);
        if (r.response_range?.more && last) {
          ranges.push({ from: Buffer.concat([last.key, Buffer.from([0])]), end: page[i]!.end });
        }
      });
    }
    return reads;
  }

  /** A nested transaction holding `stored` for this take if it is unchanged since the read. */
  private takeOp(stored: Read, instanceId: string, takenUntil: number): TakeOp {
    const record = {
      ...stored.record,
      ...{ takes: stored.record.takes + 1, takeId: randomUUID() },
      ...{ takenBy: instanceId, takenUntil },
    };
    const value = encodeRunRequestRecord(record);
    const success = [put(stored.key, value), put(this.keys.requestIndex(record.id), stored.key)];
    return {
      op: { request_txn: { compare: [unchanged(stored)], success, failure: [] } },
      bytes: Buffer.byteLength(value) + stored.key.length * 2,
      taken: takenOf(record),
    };
  }

  /** A nested transaction deleting a decided request (and its index) unchanged since the read. */
  private collectOp(stored: Read): TakeOp {
    const index = this.keys.requestIndex(stored.record.id);
    const success = [stored.key, index].map((key) => ({
      request_delete_range: { key: Buffer.from(key) },
    }));
    return {
      op: { request_txn: { compare: [unchanged(stored)], success, failure: [] } },
      bytes: stored.key.length + index.length,
      taken: null,
    };
  }

  /**
   * The request with this id: through its index key, or (a request stored before the index,
   * never taken since) by a keys-only scan of every request key.
   */
  private async locate(operation: string, id: string): Promise<Read | null> {
    let key = await this.call(operation, (o) =>
      this.client.get(this.keys.requestIndex(id)).options(o).string(),
    );
    if (key === null) {
      const keys = await this.call(operation, (o) =>
        this.client.getAll().prefix(this.keys.allRequests()).options(o).keys(),
      );
      key = keys.find((k) => k.endsWith(`:${id}`)) ?? null;
      if (key === null) return null;
    }
    const target = key;
    const response = await this.call(operation, (o) =>
      this.client.kv.range({ key: Buffer.from(target) }, o),
    );
    const kv = response.kvs[0];
    return kv ? readOf(kv) : null;
  }

  /** Puts `record` if the request key is still as read; whether it was. */
  private async putIfUnchanged(
    operation: string,
    stored: Read,
    record: RunRequestRecord,
  ): Promise<boolean> {
    const response = await this.call(operation, (o) =>
      this.client.kv.txn(
        {
          compare: [unchanged(stored)],
          success: [put(stored.key, encodeRunRequestRecord(record))],
          failure: [],
        },
        o,
      ),
    );
    return response.succeeded;
  }

  private watch(): Promise<Watcher | null> {
    const attempt: Promise<Watcher | null> = this.createWatch(() => attempt);
    return attempt;
  }

  private async createWatch(self: () => Promise<Watcher | null>): Promise<Watcher | null> {
    const requests = this.keys.allRequests();
    try {
      const watcher = await this.client.watch().prefix(requests).create();
      watcher.on('error', () => {}); // etcd3 reconnects the watch; instances also poll
      watcher.on('put', (kv) => {
        if (!waits(kv.value)) return;
        const rest = kv.key.toString().slice(requests.length);
        const job = fromKeyPart(rest.slice(0, rest.indexOf('/')));
        for (const listener of this.watchers) {
          try {
            listener(job);
          } catch {
            // a listener's failure is its own
          }
        }
      });
      return watcher;
    } catch {
      // Polling covers the gap; try again in a second while anyone listens.
      const retry = setTimeout(() => {
        if (this.watchers.size > 0 && this.watcher === self()) this.watcher = this.watch();
      }, 1000);
      retry.unref?.();
      return null;
    }
  }

  private stopWatching(): void {
    const watcher = this.watcher;
    this.watcher = null;
    void watcher?.then((w) => w?.cancel()).catch(() => undefined);
  }

  private call<T>(operation: string, fn: (o: { deadline: Date }) => Promise<T>): Promise<T> {
    return callEtcd(operation, this.options.requestTimeoutMs, fn);
  }
}

/** Whether a watched put is of a request that waits; an unreadable value wakes (polling). */
function waits(value: Buffer): boolean {
  try {
    return isWaiting(decodeRunRequestRecord(value));
  } catch {
    return true;
  }
}

function put(key: string, value: string): IRequestOp {
  return { request_put: { key: Buffer.from(key), value: Buffer.from(value) } };
}

/** The compare "this request key is as read". */
function unchanged(stored: Read) {
  return {
    key: Buffer.from(stored.key),
    target: 'Mod' as const,
    result: 'Equal' as const,
    mod_revision: stored.modRevision,
  };
}

function readOf(kv: IKeyValue): Read {
  return {
    key: kv.key.toString(),
    record: decodeRunRequestRecord(kv.value),
    modRevision: kv.mod_revision,
  };
}

/** `<requestedAt>:<id>` of a request key: the order of requests across jobs. */
function memberOf(key: string): string {
  return key.slice(key.lastIndexOf('/') + 1);
}

function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** `ops` in order, in groups of at most `maxOps` operations and {@link MAX_TXN_BYTES}. */
function chunks(ops: readonly TakeOp[], maxOps: number): TakeOp[][] {
  const groups: TakeOp[][] = [];
  let bytes = 0;
  for (const op of ops) {
    const last = groups.at(-1);
    if (!last || last.length >= maxOps || bytes + op.bytes > MAX_TXN_BYTES) {
      groups.push([op]);
      bytes = op.bytes;
    } else {
      last.push(op);
      bytes += op.bytes;
    }
  }
  return groups;
}

function contended(operation: string, id: string): BackendUnavailableError {
  return BackendUnavailableError.because(
    BACKEND,
    operation,
    `run request ${JSON.stringify(id)} changed under each of ${WRITE_ATTEMPTS} transactions`,
  );
}
