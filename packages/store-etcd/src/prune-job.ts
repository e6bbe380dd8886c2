import type { Execution } from '@fleetcron/core';
import type { PruneJobBounds } from '@fleetcron/core/backend';
import type { Deadline } from '@fleetcron/etcd-shared';
import type { Etcd3 } from 'etcd3';
import { padTime, type StoreKeys } from './keys.js';
import { chunk, prefixRange } from './record-batch.js';

/** What {@link pruneJobOnEtcd} needs of the store. */
export interface PruneJobContext {
  client: Etcd3;
  keys: StoreKeys;
  /** The server's `--max-txn-ops`: each execution deleted takes two operations. */
  maxTxnOps: number;
  call<T>(operation: string, fn: (o: Deadline) => Promise<T>): Promise<T>;
}

const OPERATION = 'pruneJob';
/** The largest time an execution key can hold, plus one. */
const MAX_BOUND = Number.MAX_SAFE_INTEGER + 1;

/**
 * `pruneJob` on etcd: counts the job's executions (one count-only read, when `keepLast` is
 * given), reads them oldest first (key order is `(startedAt, id)` order) in pages of `limit`,
 * stopping at the first that is neither beyond the newest `keepLast` nor older than `before`,
 * skips `running` rows, then deletes at most `limit` executions with their index keys in
 * transactions of `maxTxnOps` operations, sent together. Resolves how many executions the
 * server deleted (a row another caller deleted first is not counted). A terminal row never
 * changes, so no compare is needed; a row still running is never selected.
 */
export async function pruneJobOnEtcd(
  context: PruneJobContext,
  job: string,
  { keepLast, before, limit }: PruneJobBounds,
): Promise<number> {
  const { client, keys, call } = context;
  const prefix = keys.executions(job);
  const whole = prefixRange(prefix);
  let beyond = 0;
  if (keepLast !== null) {
    const count = await call(OPERATION, (o) => client.getAll().prefix(prefix).options(o).count());
    beyond = count - keepLast;
  }
  const bound =
    before === null ? null : padTime(Math.min(Math.max(Math.ceil(before), 0), MAX_BOUND));
  const doomed: string[] = [];
  let from = whole.key;
  let rank = 0;
  read: for (;;) {
    const page = await call(OPERATION, (o) =>
      client.kv.range(
        {
          key: from,
          range_end: whole.range_end,
          sort_order: 'Ascend',
          sort_target: 'Key',
          limit,
        },
        o,
      ),
    );
    for (const kv of page.kvs) {
      const member = kv.key.toString().slice(prefix.length);
      if (rank >= beyond && (bound === null || member.slice(0, 16) >= bound)) break read;
      if ((JSON.parse(kv.value.toString()) as Execution).status !== 'running') {
        doomed.push(member);
        if (doomed.length >= limit) break read;
      }
      rank++;
    }
    const last = page.kvs.at(-1);
    if (!last || page.kvs.length < limit) break;
    from = Buffer.concat([last.key, Buffer.from([0])]);
  }
  const perTxn = Math.max(1, Math.floor(context.maxTxnOps / 2));
  const deleted = await Promise.all(
    chunk(doomed, perTxn).map(async (members) => {
      const success = members.flatMap((member) => [
        { request_delete_range: { key: Buffer.from(prefix + member) } },
        { request_delete_range: { key: Buffer.from(keys.index(job, member.slice(17))) } },
      ]);
      const response = await call(OPERATION, (o) =>
        client.kv.txn({ compare: [], success, failure: [] }, o),
      );
      return response.responses
        .filter((_, i) => i % 2 === 0)
        .reduce((n, r) => n + Number(r.response_delete_range?.deleted ?? 0), 0);
    }),
  );
  return deleted.reduce((a, b) => a + b, 0);
}
