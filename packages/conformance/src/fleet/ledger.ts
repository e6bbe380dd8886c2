import { closeSync, openSync, readFileSync, writeSync } from 'node:fs';

/**
 * Host-wide monotonic time in ms (`CLOCK_MONOTONIC` through `process.hrtime`): it keeps running
 * while a process is SIGSTOPped or blocked, and every process on the host reads the same clock,
 * so ledger lines written by different processes can be ordered and subtracted.
 */
export function hostMonotonicMs(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}

/** What one ledger line records. */
export type LedgerKind =
  /** A claim was sent (`fireAt`). */
  | 'claim'
  /** Its answer came back (`status`, `token` when won). */
  | 'claimed'
  /** A renewal was sent (`token`). */
  | 'extend'
  /** Its answer came back (`status`: `renewed`, `lost` or `failed`). */
  | 'extended'
  /** The job's function was entered (`fireAt`, `token`). */
  | 'start'
  /** The job's function returned (`fireAt`, `token`, `aborted`: its signal at that moment). */
  | 'end'
  /** The run's signal was aborted (`fireAt`, `token`). */
  | 'abort'
  /** The instance froze (`point`). */
  | 'freeze'
  /** The instance was let go after the freeze (`point`). */
  | 'thaw'
  /** The instance was started (written just after its `start()` returned). */
  | 'started'
  /** The instance was stopped (its `stop()` resolved). */
  | 'stopped'
  /** A run of `job` was requested from another process (`requestedBy`). */
  | 'request'
  /** The instance's store took run requests (`requestIds`), seen in the child below the scheduler. */
  | 'take'
  /** A `leader.changed` event of the instance (`term`, `isLeader`). */
  | 'leader'
  /** A won claim was handed back unrun (`lock.withdraw`: `fireAt`, `token`, `job`). */
  | 'withdraw';

/** One line of the ledger. */
export interface LedgerEntry {
  kind: LedgerKind;
  /** Instance the line is about. */
  instance: string;
  /** Host monotonic time when it was written, ms ({@link hostMonotonicMs}). */
  mono: number;
  /** Wall-clock time of the writing process, epoch ms (for reading failures only). */
  wall: number;
  /** Process that wrote it. */
  pid: number;
  fireAt?: number;
  token?: number | null;
  status?: string;
  aborted?: boolean;
  point?: string;
  /** The job (claim, start and request lines of the fleet-control scenarios). */
  job?: string;
  /** On claim lines: the claim was a catch-up claim. */
  catchUp?: boolean;
  /** On start lines: the run's `ctx.recovery`. */
  recovery?: boolean;
  /** On start and request lines: who asked for the manual run (`null`: a scheduled fire). */
  requestedBy?: string | null;
  /** On start lines of a run request's run: its `ctx.request` (id and data). */
  request?: { id: string; data: unknown };
  /** On take lines: the ids of the requests taken. */
  requestIds?: string[];
  /** On start, end and abort lines of a sharded job: the run's `ctx.shard`. */
  shard?: { index: number; count: number; each?: boolean };
  /** On leader lines: the term elected (`isLeader`) or ended. */
  term?: number;
  /** On leader lines: elected (`true`) or lost (`false`). */
  isLeader?: boolean;
}

/**
 * An append-only ledger shared by processes: a file opened with `O_APPEND`, one JSON line per
 * event, written with one synchronous `write` so lines of different processes never interleave
 * and a line is on disk before the writer can freeze. The fleet scenarios judge what ran from
 * it, never from a scheduler's own counters or events.
 */
export class Ledger {
  private fd: number | null;

  /** Opens (creating if needed) the ledger at `path` for appending. */
  constructor(readonly path: string) {
    this.fd = openSync(path, 'a');
  }

  /** Appends one line; `mono`, `wall` and `pid` are filled in. A no-op after {@link close}. */
  write(entry: Omit<LedgerEntry, 'mono' | 'wall' | 'pid'>): void {
    if (this.fd === null) return;
    const line: LedgerEntry = {
      ...entry,
      mono: hostMonotonicMs(),
      wall: Date.now(),
      pid: process.pid,
    };
    writeSync(this.fd, `${JSON.stringify(line)}\n`);
  }

  /** Every line written so far, by every process, in file order. */
  read(): LedgerEntry[] {
    return readLedger(this.path);
  }

  /** Closes the file descriptor; idempotent. */
  close(): void {
    if (this.fd === null) return;
    closeSync(this.fd);
    this.fd = null;
  }
}

/**
 * Reads a ledger file (see {@link Ledger}): its complete lines. A line that another process is
 * appending at this moment has no newline yet (a read may see part of a write) and is left for
 * the next read; so is the torn last line of a process killed in the middle of its write.
 */
export function readLedger(path: string): LedgerEntry[] {
  const text = readFileSync(path, 'utf8');
  return text
    .slice(0, text.lastIndexOf('\n') + 1)
    .split('\n')
    .filter((line) => line.length > 0)
    .map((line) => JSON.parse(line) as LedgerEntry);
}
