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

/** A new {@link BatchCall} whose encoder pushes each request's ARGV to `args` as it is. */
export const plainCall = (): BatchCall => ({ positions: [], keys: [], args: [] });

/**
 * Groups `items` into script calls made by `open`. `slotOf` (on a Cluster) answers an item's
 * hash slot; items of one slot go to the same calls in array order, so two requests of one job
 * (one slot) are applied in order: within a call by the script's loop, across calls because
 * calls to one node are written, and run, in the order they were made. Without `slotOf` (one
 * node) items are only cut into calls of at most `callSize`. `encode` adds an item's KEYS and
 * ARGV to its call (its position is already the call's last).
 */
export function planBatch<T, C extends BatchCall>(
  items: readonly T[],
  slotOf: ((item: T) => number) | undefined,
  open: () => C,
  encode: (call: C, item: T, position: number) => void,
  callSize = BATCH_CALL_SIZE,
): C[] {
  const calls: C[] = [];
  if (!slotOf) {
    // one node: consecutive runs of callSize, no map
    let call: C | undefined;
    for (let position = 0; position < items.length; position++) {
      if (!call || call.positions.length >= callSize) {
        call = open();
        calls.push(call);
      }
      call.positions.push(position);
      encode(call, items[position]!, position);
    }
    return calls;
  }
  const byslot = new Map<number, C>();
  items.forEach((item, position) => {
    const slot = slotOf(item);
    let call = byslot.get(slot);
    if (!call || call.positions.length >= callSize) {
      call = open();
      byslot.set(slot, call);
      calls.push(call);
    }
    call.positions.push(position);
    encode(call, item, position);
  });
  return calls;
}

/**
 * Sends every call at once (`send` must not await one before starting the next, so ioredis
 * writes them back to back) and answers the batch's results: `decode` writes the results of
 * one call's reply to `results[call.positions[i]]`. Rejects as soon as one call fails: a batch
 * has no partial answers.
 */
export async function runBatch<C extends BatchCall, R>(
  calls: readonly C[],
  size: number,
  send: (call: C) => Promise<unknown>,
  decode: (call: C, reply: unknown, results: R[]) => void,
): Promise<R[]> {
  const results = new Array<R>(size);
  await Promise.all(calls.map((call) => send(call).then((reply) => decode(call, reply, results))));
  return results;
}

/**
 * A `decode` for {@link runBatch} of scripts that answer a list with one reply per request:
 * `results[position] = decodeOne(position, reply)`, after checking the list's length.
 */
export function eachReply<R>(
  decodeOne: (position: number, reply: unknown) => R,
): (call: BatchCall, replies: unknown, results: R[]) => void {
  return (call, replies, results) => {
    if (!Array.isArray(replies) || replies.length !== call.positions.length) {
      throw new Error(
        `a batch script answered ${Array.isArray(replies) ? replies.length : typeof replies} replies for ${call.positions.length} requests`,
      );
    }
    call.positions.forEach((position, i) => {
      results[position] = decodeOne(position, replies[i]);
    });
  };
}
