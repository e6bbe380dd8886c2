import { type BatchOptions, type MarkReading, MemoryLock } from '@fleetcron/core';

/**
 * Deliberately broken `readMarks`: the readMarks scenario must fail against each (and pass on
 * MemoryLock, the reference).
 */

/** (r1) Stale: answers each key's mark as first read, from a cache that claims never update. */
export class StaleMarks extends MemoryLock {
  private readonly seen = new Map<string, number | null>();

  override async readMarks(keys: readonly string[], options?: BatchOptions): Promise<MarkReading> {
    const reading = await super.readMarks(keys, options);
    const marks = keys.map((key, i) => {
      if (!this.seen.has(key)) this.seen.set(key, reading.marks[i] ?? null);
      return this.seen.get(key) ?? null;
    });
    return { ...reading, marks };
  }
}

/**
 * (r2) Shifted: reads each distinct key once and answers the distinct keys' marks (padded with
 * `null`), so every mark after the first repeated key belongs to another key.
 */
export class ShiftedMarks extends MemoryLock {
  override async readMarks(keys: readonly string[], options?: BatchOptions): Promise<MarkReading> {
    const distinct = [...new Set(keys)];
    const reading = await super.readMarks(distinct, options);
    return { ...reading, marks: keys.map((_, i) => reading.marks[i] ?? null) };
  }
}

/** (r3) Checks only the first chunk of 128 keys; a bad key after it is read as "no mark". */
export class ChecksFirstChunkOnly extends MemoryLock {
  override async readMarks(keys: readonly string[], options?: BatchOptions): Promise<MarkReading> {
    const head = await super.readMarks(keys.slice(0, 128), options);
    // a key with a lone surrogate is read as the empty key (never claimed here) instead
    const rest = keys.slice(128).map((key) => (/\p{Cs}/u.test(String(key)) ? '' : key));
    const tail = await super.readMarks(rest, options);
    return { ...head, marks: [...head.marks, ...tail.marks] };
  }
}

/** (r4) Ignores an aborted signal and reads anyway. */
export class IgnoresAbortedRead extends MemoryLock {
  override readMarks(keys: readonly string[]): Promise<MarkReading> {
    return super.readMarks(keys);
  }
}

/** (r5) Answers a `backendTime` a minute ahead of the clock it read the marks by. */
export class SkewedReadTime extends MemoryLock {
  override async readMarks(keys: readonly string[], options?: BatchOptions): Promise<MarkReading> {
    const reading = await super.readMarks(keys, options);
    return { ...reading, backendTime: (reading.backendTime ?? Date.now()) + 60_000 };
  }
}
