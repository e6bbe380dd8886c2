import type { Clock } from '../clock.js';
import type { BatchOptions } from '../lock.js';
import { safeCall } from './safe.js';

/** One item handed to the lock inside a batch: when its batch left, and its own answer. */
export interface SentItem<Result> {
  /** Monotonic time the batch was handed to the lock (a lease's deadline counts from it). */
  readonly sentAt: number;
  /** This item's answer; rejects when the whole batch failed (or answered malformed). */
  readonly answer: Promise<Result>;
}

/** What a {@link Batcher} needs. */
export interface BatcherOptions<Item, Result> {
  /** Most items in one call. */
  readonly size: number;
  readonly clock: Clock;
  /** The batched lock call (`claimMany`, `extendMany`, `releaseMany`): `results[i]` for `items[i]`. */
  readonly call: (items: Item[], options: BatchOptions) => Promise<Result[]>;
  /** What the call is, for errors (`claimMany`). */
  readonly name: string;
  /**
   * Runs the flush after the current macrotask (default `setImmediate`): every item submitted
   * while one timer wake dispatches, and the promise callbacks it starts, lands in one flush.
   */
  readonly defer?: (flush: () => void) => void;
}

interface Member<Item, Result> {
  readonly item: Item;
  /** Aborted when the caller gives up on the item. */
  readonly signal: AbortSignal | undefined;
  /** Read at flush time: `false` drops the item unsent. */
  readonly wanted: () => boolean;
  readonly sent: (sent: SentItem<Result> | null) => void;
}

const defaultDefer = (flush: () => void): void => {
  setImmediate(flush);
};

/**
 * Coalesces lock calls made in the same macrotask into batched calls: items submitted before
 * the deferred flush runs are split into batches of at most `size`, sent concurrently, and each
 * item's answer settles on its own as its batch's answer arrives.
 *
 * Given-up items are never sent: an item whose `signal` aborted, or whose `wanted()` says no at
 * flush time, resolves `null` (not sent). A batch's own `BatchOptions.signal` aborts only when
 * every member's signal has aborted (no one waits for it any more); a member that gives up alone
 * after its batch left keeps its answer promise, so the caller can hand back a late win.
 */
export class Batcher<Item, Result> {
  private pending: Member<Item, Result>[] = [];
  private scheduled = false;
  private readonly defer: (flush: () => void) => void;

  constructor(private readonly o: BatcherOptions<Item, Result>) {
    this.defer = o.defer ?? defaultDefer;
  }

  /**
   * Queues `item` for the next flush. Resolves when it was sent (with its send time and its
   * answer), or `null` when it was dropped unsent (`signal` aborted or `wanted()` false at flush).
   */
  submit(
    item: Item,
    signal?: AbortSignal,
    wanted: () => boolean = () => true,
  ): Promise<SentItem<Result> | null> {
    return new Promise((sent) => {
      this.pending.push({ item, signal, wanted, sent });
      if (this.scheduled) return;
      this.scheduled = true;
      this.defer(() => this.flush());
    });
  }

  /** Items waiting for the next flush (for tests and metrics). */
  get queued(): number {
    return this.pending.length;
  }

  private flush(): void {
    this.scheduled = false;
    const members = this.pending;
    this.pending = [];
    const going: Member<Item, Result>[] = [];
    for (const member of members) {
      if (!member.signal?.aborted && stillWanted(member)) going.push(member);
      else member.sent(null);
    }
    for (let i = 0; i < going.length; i += this.o.size) {
      this.send(going.slice(i, i + this.o.size));
    }
  }

  private send(members: Member<Item, Result>[]): void {
    const batch = new AbortController();
    const signals = members.map((m) => m.signal);
    if (signals.every((s) => s !== undefined)) {
      let left = members.length;
      const gaveUp = () => {
        left--;
        if (left === 0) batch.abort(new Error(`every member of the ${this.o.name} gave up`));
      };
      for (const s of signals) s?.addEventListener('abort', gaveUp, { once: true });
    }
    const sentAt = this.o.clock.monotonic();
    const items = members.map((m) => m.item);
    const answers = safeCall(() => this.o.call(items, { signal: batch.signal })).then((results) =>
      checkedLength(results, members.length, this.o.name),
    );
    members.forEach((member, i) => {
      const answer = answers.then((results) => results[i] as Result);
      answer.catch(() => {}); // the member's caller handles it; never an unhandled rejection
      member.sent({ sentAt, answer });
    });
  }
}

/** A throwing `wanted()` counts as not wanted. */
function stillWanted(member: { wanted: () => boolean }): boolean {
  try {
    return member.wanted();
  } catch {
    return false;
  }
}

function checkedLength<Result>(results: unknown, length: number, name: string): Result[] {
  if (!Array.isArray(results) || results.length !== length) {
    const got = Array.isArray(results) ? `${results.length} answers` : String(results);
    throw new Error(`the lock's ${name} answered ${got} for ${length} requests`);
  }
  return results as Result[];
}
