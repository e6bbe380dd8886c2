import type { IRequestOp } from 'etcd3';
import type { KeyLayout } from './keys.js';
import { type EtcdRpc, getOp, kvsOf, markOf } from './rpc.js';

/**
 * Reads the catch-up marks of `keys` (see `Lock.readMarks`): one transaction of range reads
 * per `maxTxnOps` keys (etcd refuses a transaction with more operations than its
 * `--max-txn-ops`), all sent at once. `marks[i]` is the mark of `keys[i]`, read as `inspect`
 * reads it. Rejects as soon as one transaction fails (no partial answers); the other
 * transactions' outcomes are handled, never left unhandled. Once `signal` is aborted no
 * transaction is sent.
 */
export async function readEtcdMarks(
  rpc: EtcdRpc,
  layout: KeyLayout,
  keys: readonly string[],
  maxTxnOps: number,
  signal?: AbortSignal,
): Promise<(number | null)[]> {
  const chunks: string[][] = [];
  for (let i = 0; i < keys.length; i += maxTxnOps) chunks.push(keys.slice(i, i + maxTxnOps));
  const replies = await Promise.all(
    chunks.map((chunk) => {
      const reads: IRequestOp[] = chunk.map((key) => getOp(layout.mark(key)));
      return rpc.txn('readMarks', [], reads, [], signal);
    }),
  );
  return replies.flatMap((reply, c) => chunks[c]!.map((_, i) => markOf(kvsOf(reply, i)[0])));
}
