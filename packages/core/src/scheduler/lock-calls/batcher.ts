import type { Clock } from '../../clock.js';
import type { BatchOptions } from '../../lock.js';
import { safeCall } from '../fire/index.js';
import type { GiveUpSignal } from '../timing/index.js';

/**
 * Default most batches of one {@link Batcher} in flight at once. Thousands of due fires make
 * dozens of batches: sent all at once they queue inside the client and the backend, where their
 * call timeouts already run (Redis and etcd calls timed out under load and failed their fires
 * closed); the batches beyond this wait here, unsent, and leave as earlier ones are answered.
 */
export const MAX_BATCHES_IN_FLIGHT = 4;

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
  /** Read for each batch's send time (`SentItem.sentAt`). */
  readonly clock: Pick<Clock, 'monotonic'>;
  /** The batched lock call (`claimMany`, `extendMany`, `releaseMany`): `results[i]` for `items[i]`. */
  readonly call: (items: Item[], options: BatchOptions) => Promise<Result[]>;
  /** What the call is, for errors (`claimMany`). */
  readonly name: string;
  /**
   * Runs the flush after the current macrotask (default `setImmediate`): every item submitted
   * while one timer wake dispatches, and the promise callbacks it starts, lands in one flush.
   */
  readonly defer?: (flush: () => void) => void;
  /** Most batches in flight at once (default {@link MAX_BATCHES_IN_FLIGHT}); the rest wait. */
  readonly maxInFlight?: number;
}

interface Member<Item, Result> {
  readonly item: Item;
  /** Aborted when the caller gives up on the item. */
  readonly signal: GiveUpSignal | undefined;
  /** Read at flush time: `false` drops the item unsent. */
  readonly wanted: () => boolean;
  readonly sent: (sent: SentItem<Result> | null) => void;
}

/** The default `wanted` of {@link Batcher.submit} (one function, not one per item). */
const alwaysWanted = (): boolean => true;

/** Shared per member instead of allocated per member (a burst sends thousands). */
const ignore = (): void => {};
const ONCE = { once: true } as const;

const defaultDefer = (flush: () => void): void => {
  setImmediate(flush);
};

/**
 * Coalesces lock calls made in the same macrotask into batched calls: items submitted before
 * the deferred flush runs are split into batches of at most `size`, at most `maxInFlight` of
 * them in flight at once (a batch leaves when an earlier one is answered or given up on, and
 * is sent from then on: its members' `sentAt`), and each item's answer settles on its own as
 * its batch's answer arrives.
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
  /** Batches formed but not sent yet (all slots were taken), oldest first. */
  private readonly waiting: Member<Item, Result>[][] = [];
  private inFlight = 0;
  private readonly maxInFlight: number;

  constructor(private readonly o: BatcherOptions<Item, Result>) {
    this.defer = o.defer ?? defaultDefer;
    this.maxInFlight = o.maxInFlight ?? MAX_BATCHES_IN_FLIGHT;
  }

  /**
   * Queues `item` for the next flush. Resolves when it was sent (with its send time and its
   * answer), or `null` when it was dropped unsent (`signal` aborted or `wanted()` false at flush).
   */
  submit(
    item: Item,
    signal?: GiveUpSignal,
    wanted: () => boolean = alwaysWanted,
  ): Promise<SentItem<Result> | null> {
    return new Promise((sent) => {
      this.pending.push({ item, signal, wanted, sent });
      if (this.scheduled) return;
      this.scheduled = true;
      this.defer(() => this.flush());
    });
  }

  /**
   * Runs the pending flush now instead of after the macrotask (the timer queue calls it at the
   * end of a wake: every fire of the wake was submitted by then). A no-op with nothing pending.
   */
  flushNow(): void {
    if (this.scheduled) this.flush();
  }

  /** Items not sent yet: waiting for the next flush or for a free slot (tests and metrics). */
  get queued(): number {
    return this.waiting.reduce((n, batch) => n + batch.length, this.pending.length);
  }

  /** Batches in flight (tests and metrics). */
  get sending(): number {
    return this.inFlight;
  }

  private flush(): void {
    if (!this.scheduled) return; // flushed early by flushNow()
    this.scheduled = false;
    const members = this.pending;
    this.pending = [];
    for (const member of members) {
      if (!going(member)) {
        member.sent(null);
        continue;
      }
      const last = this.waiting[this.waiting.length - 1];
      if (last && last.length < this.o.size) last.push(member);
      else this.waiting.push([member]);
    }
    this.pump();
  }

  /** Sends waiting batches while slots are free (members given up meanwhile are dropped). */
  private pump(): void {
    while (this.inFlight < this.maxInFlight) {
      const batch = this.waiting.shift();
      if (!batch) return;
      const members: Member<Item, Result>[] = [];
      for (const member of batch) {
        if (going(member)) members.push(member);
        else member.sent(null);
      }
      if (members.length > 0) this.send(members);
    }
  }

  private send(members: Member<Item, Result>[]): void {
    this.inFlight++;
    let freed = false;
    const free = () => {
      if (freed) return;
      freed = true;
      this.inFlight--;
      this.pump();
    };
    const batch = new AbortController();
    const signals = members.map((m) => m.signal);
    if (signals.every((s) => s !== undefined)) {
      let left = members.length;
      const gaveUp = () => {
        left--;
        if (left === 0) batch.abort(new Error(`every member of the ${this.o.name} gave up`));
      };
      for (const s of signals) s?.addEventListener('abort', gaveUp, ONCE);
    }
    const sentAt = this.o.clock.monotonic();
    const items = members.map((m) => m.item);
    const answers = safeCall(() => this.o.call(items, { signal: batch.signal })).then((results) =>
      checkedLength(results, members.length, this.o.name),
    );
    // the slot is free when the answer came, or when every member gave up (a hung call must
    // not hold it: the batches behind it are then sent, and bounded, on their own)
    answers.then(free, free);
    batch.signal.addEventListener('abort', free, ONCE);
    members.forEach((member, i) => {
      const answer = answers.then((results) => results[i] as Result);
      answer.catch(ignore); // the member's caller handles it; never an unhandled rejection
      member.sent({ sentAt, answer });
    });
  }
}

/** Whether a member is still to be sent: not aborted and still wanted. */
function going(member: { signal: GiveUpSignal | undefined; wanted: () => boolean }): boolean {
  return !member.signal?.aborted && stillWanted(member);
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
