/**
 * How `recordMany` becomes script calls: the executions of one job always go to the same call,
 * in batch order, so the record script's loop applies them exactly as single records one after
 * the other (executions of different jobs share nothing but the registry, so their relative order
 * does not matter). On a Cluster a call holds jobs of one hash slot only.
 */

/** Most executions one `recordMany` script call carries (unless one job alone has more). */
export const RECORD_CALL_SIZE = 128;

/** One execution as the record script takes it: its three keys and its per-execution ARGV. */
export interface RecordWrite {
  readonly job: string;
  readonly keys: readonly string[];
  readonly args: readonly string[];
}

/** One script call of a batch: KEYS and ARGV (without the shared trim arguments). */
export interface RecordCall {
  readonly keys: string[];
  readonly args: string[];
  /** Executions in the call. */
  size: number;
}

/**
 * Groups `writes` by job (batch order kept within a job), then packs whole jobs into calls of
 * about `callSize` executions; with `slotOf` (a Cluster) only jobs of the same slot share a
 * call. A job is never split, so a call may exceed `callSize` when one job has more.
 */
export function planRecordCalls(
  writes: readonly RecordWrite[],
  slotOf: ((write: RecordWrite) => number) | undefined,
  callSize = RECORD_CALL_SIZE,
): RecordCall[] {
  const byJob = new Map<string, RecordWrite[]>();
  for (const write of writes) {
    const list = byJob.get(write.job);
    if (list) list.push(write);
    else byJob.set(write.job, [write]);
  }
  const calls: RecordCall[] = [];
  const open = new Map<number, RecordCall>(); // slot (0 on one node) → call being filled
  for (const list of byJob.values()) {
    const slot = slotOf ? slotOf(list[0]!) : 0;
    let call = open.get(slot);
    if (!call || call.size + list.length > callSize) {
      call = { keys: [], args: [], size: 0 };
      open.set(slot, call);
      calls.push(call);
    }
    for (const write of list) {
      call.keys.push(...write.keys);
      call.args.push(...write.args);
    }
    call.size += list.length;
  }
  return calls;
}
