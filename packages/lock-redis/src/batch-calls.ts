/**
 * How a batch (`claimMany`, `extendMany`, `releaseMany`) becomes script calls: one call per
 * hash slot on a Redis Cluster (a script may only touch keys of one slot), at most
 * {@link BATCH_CALL_SIZE} requests per call, all sent at once (pipelined: one round trip per
 * node), and the replies put back in request order.
 */

/**
 * Most requests one script call carries. A Redis script blocks the server while it runs: a
 * batch of 1,000 claims on one node is cut into calls of at most this many (about 1-2 ms of
 * server time each), still written in one go, so other clients get a turn between them.
 */
export const BATCH_CALL_SIZE = 128;

/** One script call of a batch: the batch positions it answers, its KEYS and its ARGV. */
export interface BatchCall {
  /** Positions in the batch of the requests of this call, in array order. */
  readonly positions: number[];
  readonly keys: string[];
  readonly args: string[];
}

/**
 * Groups `items` into script calls. `slotOf` (on a Cluster) answers an item's hash slot; items
 * of one slot go to the same calls in array order, so two requests of one job (one slot) are
 * applied in order: within a call by the script's loop, across calls because calls to one node
 * are written, and run, in the order they were made. Without `slotOf` (one node) items are only
 * cut into calls of at most `callSize`. `encode` appends an item's KEYS and ARGV to its call.
 */
export function planBatch<T>(
  items: readonly T[],
  slotOf: ((item: T) => number) | undefined,
  encode: (call: BatchCall, item: T) => void,
  callSize = BATCH_CALL_SIZE,
): BatchCall[] {
  const calls: BatchCall[] = [];
  const open = new Map<number, BatchCall>();
  items.forEach((item, position) => {
    const slot = slotOf ? slotOf(item) : 0;
    let call = open.get(slot);
    if (!call || call.positions.length >= callSize) {
      call = { positions: [], keys: [], args: [] };
      open.set(slot, call);
      calls.push(call);
    }
    call.positions.push(position);
    encode(call, item);
  });
  return calls;
}

/**
 * Sends every call at once (`send` must not await one before starting the next, so ioredis
 * writes them back to back) and answers `decode(position, reply)` for each request in batch
 * order. Rejects as soon as one call fails: a batch has no partial answers.
 */
export async function runBatch<R>(
  calls: readonly BatchCall[],
  size: number,
  send: (call: BatchCall) => Promise<unknown>,
  decode: (position: number, reply: unknown) => R,
): Promise<R[]> {
  const results = new Array<R>(size);
  await Promise.all(
    calls.map(async (call) => {
      const replies = (await send(call)) as unknown[];
      if (!Array.isArray(replies) || replies.length !== call.positions.length) {
        throw new Error(
          `a batch script answered ${Array.isArray(replies) ? replies.length : typeof replies} replies for ${call.positions.length} requests`,
        );
      }
      call.positions.forEach((position, i) => {
        results[position] = decode(position, replies[i]);
      });
    }),
  );
  return results;
}
