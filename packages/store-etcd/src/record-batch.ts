import { BackendUnavailableError, type Execution } from '@fleetcron/core';
import { TERMINAL_STATUSES } from '@fleetcron/core/backend';
import { BACKEND, type Deadline } from '@fleetcron/etcd-shared';
import type { Etcd3, ICompare, IRequestOp, IResponseOp } from 'etcd3';
import { prefixEnd } from './etcd-fleet.js';
import type { StoreKeys } from './keys.js';

/** Largest request body (keys and values) one write transaction carries; etcd's default limit is 1.5 MiB. */
const MAX_TXN_BYTES = 1024 * 1024;

/** Transactions one group of executions gets when its rows change between read and write. */
const ATTEMPTS = 5;

/** What one execution's keys held when read: its index entry and its row. */
interface Seen {
  /** The index entry `x/<job>/<id>` (the row's member), `null` when absent. */
  previous: string | null;
  /** The index entry's `mod_revision`, `null` when absent. */
  revision: string | null;
  /** The stored row (JSON) under the index entry's member, `null` when absent. */
  row: string | null;
}

/** One write transaction: the executions it writes, its compares and its operations. */
interface WriteTxn {
  executions: Execution[];
  compare: ICompare[];
  success: IRequestOp[];
  bytes: number;
  /** Jobs whose last outcome this transaction puts (one put per job). */
  outcomes: Map<string, Execution>;
  /** Jobs that get a new row here (trimmed afterwards, as `record` does). */
  created: Set<string>;
}

/** How a {@link RecordBatch} reaches etcd. */
export interface RecordBatchContext {
  client: Etcd3;
  keys: StoreKeys;
  maxHistory: number;
  /** Most compares, and most operations, of one transaction (etcd's `--max-txn-ops`). */
  maxTxnOps: number;
  /** Runs one etcd call with a deadline; failures become `BackendUnavailableError`. */
  call<T>(operation: string, fn: (o: Deadline) => Promise<T>): Promise<T>;
}

const OPERATION = 'recordMany';
const isTerminal = (e: Execution): boolean => TERMINAL_STATUSES.includes(e.status);
const statusOf = (row: string): string => (JSON.parse(row) as Execution).status;
/** A row's identity in this store: its job and id (its keys are `x/<job>/<id>`, `e/<job>/…`). */
const rowId = (e: Execution): string => `${e.job}\u0000${e.id}`;

/**
 * `recordMany` on etcd: the writes of `record` for a batch in a few round trips. The batch is
 * merged by id first as single records would apply it (a terminal write ends the row; a later
 * write of the same id is dropped). Then: one read of every index entry and row (transactions of
 * range reads, sent together), write transactions of whole jobs, sent together, and the trims of
 * the jobs that got new rows (a count, a key read and a delete, each batched).
 *
 * Atomicity of "the first outcome wins" without a server-side script: each write transaction
 * compares, for every execution it writes, the index entry's `mod_revision` with the one read
 * (or its absence). Every change of a row (write, trim, prune) rewrites or deletes its index
 * entry in the same transaction, so a row that changed since the read fails the compare; the
 * whole transaction then writes nothing, and its executions are read and tried again (up to
 * {@link ATTEMPTS} times, then `BackendUnavailableError`). A row read as terminal is never written.
 */
export class RecordBatch {
  constructor(private readonly context: RecordBatchContext) {}

  /** Writes `executions` (already checked and encoded as `record` stores them). */
  async write(executions: readonly Execution[]): Promise<void> {
    const groups = groupByJob(mergeById(executions));
    const created = new Set<string>();
    await this.writeGroups(groups, created, 1);
    await this.trim([...created]);
  }

  /** Reads, plans and commits the groups; a transaction whose compares failed is tried again. */
  private async writeGroups(
    groups: Execution[][],
    created: Set<string>,
    attempt: number,
  ): Promise<void> {
    const seen = await this.read(groups.flat());
    const txns = this.plan(groups, seen);
    // A job split over several transactions needs them in order (its last outcome); else all at once.
    const split = new Set<string>();
    const jobs = new Set<string>();
    for (const txn of txns) {
      const inTxn = new Set(txn.executions.map((e) => e.job));
      for (const job of inTxn) (jobs.has(job) ? split : jobs).add(job);
    }
    const commit = async (txn: WriteTxn): Promise<void> => {
      const response = await this.context.call(OPERATION, (o) =>
        this.context.client.kv.txn({ compare: txn.compare, success: txn.success, failure: [] }, o),
      );
      if (response.succeeded) {
        for (const job of txn.created) created.add(job);
        return;
      }
      if (attempt >= ATTEMPTS) {
        throw BackendUnavailableError.because(
          BACKEND,
          OPERATION,
          `executions changed under each of ${ATTEMPTS} transactions`,
        );
      }
      await this.writeGroups(groupByJob(txn.executions), created, attempt + 1);
    };
    if (split.size === 0) {
      await Promise.all(txns.map(commit));
    } else {
      for (const txn of txns) await commit(txn);
    }
  }

  /** Reads the index entry and row of each execution: transactions of range reads, all at once. */
  private async read(executions: Execution[]): Promise<Map<string, Seen>> {
    const { keys } = this.context;
    const seen = new Map<string, Seen>();
    const perTxn = Math.max(1, Math.floor(this.context.maxTxnOps / 2));
    // first: the index entry, and the row under the member the execution will have
    await this.ranges(
      executions.flatMap((e) => [
        { key: Buffer.from(keys.index(e.job, e.id)) },
        { key: Buffer.from(keys.executions(e.job) + keys.member(e.startedAt, e.id)) },
      ]),
      perTxn * 2,
      (responses) => {
        executions.forEach((e, i) => {
          const index = responses[i * 2]?.response_range.kvs[0];
          const row = responses[i * 2 + 1]?.response_range.kvs[0];
          const previous = index ? index.value.toString() : null;
          const guessed = previous === keys.member(e.startedAt, e.id);
          seen.set(rowId(e), {
            previous,
            revision: index ? index.mod_revision : null,
            row: guessed && row ? row.value.toString() : null,
          });
        });
      },
    );
    // then, for rows whose startedAt changed: the row under the member the index names
    const moved = executions.filter((e) => {
      const s = seen.get(rowId(e))!;
      return s.previous !== null && s.previous !== keys.member(e.startedAt, e.id);
    });
    if (moved.length > 0) {
      await this.ranges(
        moved.map((e) => ({
          key: Buffer.from(keys.executions(e.job) + seen.get(rowId(e))!.previous),
        })),
        this.context.maxTxnOps,
        (responses) => {
          moved.forEach((e, i) => {
            const row = responses[i]?.response_range.kvs[0];
            seen.get(rowId(e))!.row = row ? row.value.toString() : null;
          });
        },
      );
    }
    return seen;
  }

  /**
   * Plans write transactions: whole jobs packed in order, within `maxTxnOps` compares and
   * operations and {@link MAX_TXN_BYTES}; a job larger than one transaction continues in the next.
   */
  private plan(groups: Execution[][], seen: Map<string, Seen>): WriteTxn[] {
    const { keys } = this.context;
    const limit = this.context.maxTxnOps;
    const txns: WriteTxn[] = [];
    let txn = newTxn();
    const close = () => {
      if (txn.executions.length === 0) return;
      for (const [job, e] of txn.outcomes) {
        const outcome = {
          lastStatus: e.status,
          lastFireAt: e.fireAt,
          lastFinishedAt: e.finishedAt,
        };
        txn.success.push({
          request_put: {
            key: Buffer.from(keys.outcome(job)),
            value: Buffer.from(JSON.stringify(outcome)),
          },
        });
      }
      txns.push(txn);
      txn = newTxn();
    };
    for (const group of groups) {
      for (const e of group) {
        const s = seen.get(rowId(e))!;
        if (s.row !== null && statusOf(s.row) !== 'running') continue; // the first outcome wins
        const member = keys.member(e.startedAt, e.id);
        const indexKey = keys.index(e.job, e.id);
        const rowKey = keys.executions(e.job) + member;
        const value = JSON.stringify(e);
        const ops: IRequestOp[] = [
          { request_put: { key: Buffer.from(rowKey), value: Buffer.from(value) } },
          { request_put: { key: Buffer.from(indexKey), value: Buffer.from(member) } },
        ];
        if (s.previous !== null && s.previous !== member) {
          ops.push({
            request_delete_range: { key: Buffer.from(keys.executions(e.job) + s.previous) },
          });
        }
        const bytes = rowKey.length + value.length + indexKey.length * 2 + member.length + 64;
        const outcomeOps = isTerminal(e) && !txn.outcomes.has(e.job) ? 1 : 0;
        const full =
          txn.compare.length + 1 > limit ||
          txn.success.length + txn.outcomes.size + ops.length + outcomeOps > limit ||
          txn.bytes + bytes > MAX_TXN_BYTES;
        if (full && txn.executions.length > 0) close();
        txn.executions.push(e);
        txn.success.push(...ops);
        txn.bytes += bytes;
        txn.compare.push(
          s.revision === null
            ? { key: Buffer.from(indexKey), target: 'Version', result: 'Equal', version: 0 }
            : {
                key: Buffer.from(indexKey),
                target: 'Mod',
                result: 'Equal',
                mod_revision: s.revision,
              },
        );
        if (isTerminal(e)) {
          txn.outcomes.delete(e.job); // Map order: jobs by their last outcome
          txn.outcomes.set(e.job, e);
        }
        if (s.previous === null) txn.created.add(e.job);
      }
    }
    close();
    return txns;
  }

  /** Drops the oldest executions beyond `maxHistory` of each job, as `record`'s trim does. */
  private async trim(jobs: string[]): Promise<void> {
    if (jobs.length === 0) return;
    const { keys, maxHistory } = this.context;
    const counts: number[] = [];
    await this.ranges(
      jobs.map((job) => ({ ...prefixRange(keys.executions(job)), count_only: true })),
      this.context.maxTxnOps,
      (responses) => {
        responses.forEach((r) => {
          counts.push(Number(r.response_range.count));
        });
      },
    );
    const over = jobs
      .map((job, i) => ({ job, excess: (counts[i] ?? 0) - maxHistory }))
      .filter((o) => o.excess > 0);
    if (over.length === 0) return;
    const doomed: string[] = [];
    await this.ranges(
      over.map((o) => ({
        ...prefixRange(keys.executions(o.job)),
        keys_only: true,
        sort_order: 'Ascend' as const,
        sort_target: 'Key' as const,
        limit: o.excess,
      })),
      this.context.maxTxnOps,
      (responses) => {
        responses.forEach((r, i) => {
          const prefix = keys.executions(over[i]!.job);
          for (const kv of r.response_range.kvs) {
            const key = kv.key.toString();
            doomed.push(key, keys.index(over[i]!.job, key.slice(prefix.length + 17)));
          }
        });
      },
    );
    const deletes = doomed.map((key) => ({ request_delete_range: { key: Buffer.from(key) } }));
    await Promise.all(
      chunk(deletes, this.context.maxTxnOps).map((success) =>
        this.context.call(OPERATION, (o) =>
          this.context.client.kv.txn({ compare: [], success, failure: [] }, o),
        ),
      ),
    );
  }

  /**
   * Runs range reads in transactions of at most `perTxn`, all at once, and hands `read` every
   * response in request order.
   */
  private async ranges(
    requests: IRequestOp['request_range'][],
    perTxn: number,
    read: (responses: IResponseOp[]) => void,
  ): Promise<void> {
    const parts = await Promise.all(
      chunk(requests, perTxn).map((part) =>
        this.context.call(OPERATION, (o) =>
          this.context.client.kv.txn(
            { compare: [], success: part.map((r) => ({ request_range: r })), failure: [] },
            o,
          ),
        ),
      ),
    );
    read(parts.flatMap((p) => p.responses));
  }
}

/**
 * The batch as single records would leave it, one write per row (job and id) in the order of its last
 * accepted write: once a write of a row is terminal, later writes of that row are dropped.
 */
export function mergeById(executions: readonly Execution[]): Execution[] {
  const merged = new Map<string, Execution>();
  for (const execution of executions) {
    const before = merged.get(rowId(execution));
    if (before && isTerminal(before)) continue; // the first outcome wins
    merged.delete(rowId(execution)); // re-inserted: the batch order is the order of last writes
    merged.set(rowId(execution), execution);
  }
  return [...merged.values()];
}

/** The executions grouped by job, jobs in order of first appearance, each job's order kept. */
function groupByJob(executions: readonly Execution[]): Execution[][] {
  const byJob = new Map<string, Execution[]>();
  for (const e of executions) {
    const list = byJob.get(e.job);
    if (list) list.push(e);
    else byJob.set(e.job, [e]);
  }
  return [...byJob.values()];
}

function newTxn(): WriteTxn {
  return {
    executions: [],
    compare: [],
    success: [],
    bytes: 0,
    outcomes: new Map(),
    created: new Set(),
  };
}

/** The range of every key starting with `prefix`. */
export function prefixRange(prefix: string): { key: Buffer; range_end: Buffer } {
  const key = Buffer.from(prefix);
  return { key, range_end: prefixEnd(key) };
}

/** `items` in slices of at most `size`. */
export function chunk<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}
