import { closeSync, existsSync, openSync, readdirSync, readFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';

/**
 * What a ledger line says happened. Written by the instance:
 * - `boot`/`exit`/`crash`: the process started, stopped cleanly, or hit an unhandled error;
 * - `ready`: its backend client connected, its jobs added and its scheduler started (what the
 *   driver waits for before it counts the process as up);
 * - `start`/`end`: the job's own code began and returned (`outcome` `ok`, `aborted`, `error`);
 * - `won`/`renewed`/`lost`/`finished`/`skipped`/`claim_failed`/`store_failed`: scheduler events
 *   (`subscribe`).
 */
export type LedgerKind =
  | 'boot'
  | 'ready'
  | 'exit'
  | 'crash'
  | 'start'
  | 'end'
  | 'won'
  | 'renewed'
  | 'lost'
  | 'finished'
  | 'skipped'
  | 'claim_failed'
  | 'store_failed';

/** One JSON line of a ledger. */
export interface LedgerLine {
  kind: LedgerKind;
  /** Scheduler instance id (one per process incarnation). */
  instance: string;
  /**
   * System-wide monotonic time in ms (`CLOCK_MONOTONIC`, not faked: the instances run with
   * `FAKETIME_DONT_FAKE_MONOTONIC=1`). Every process of the machine shares it, so it orders
   * events across processes in real time, through freezes and skewed wall clocks.
   */
  mono: number;
  /** The process's own (skewed) wall clock, epoch ms. */
  wall: number;
  /** The real wall clock, epoch ms: `wall` minus the skew the process was started with. */
  real: number;
  job?: string;
  fireAt?: number;
  token?: number;
  /** `end`: how the job's code ended. */
  outcome?: 'ok' | 'aborted' | 'error';
  /** `finished`: the status the scheduler reported; `skipped`: why. */
  status?: string;
  reason?: string;
  /**
   * `start`/`end`: the lease deadline the job believed (monotonic ms), from `ctx.lease` when the
   * scheduler offers it; absent otherwise.
   */
  believedDeadline?: number;
  /** `boot`: the skew the process was started with, and its pid. */
  skewMs?: number;
  pid?: number;
  error?: string;
}

/** Monotonic ms of the machine (`CLOCK_MONOTONIC`), comparable across processes. */
export function monoNow(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}

/**
 * An append-only ledger file: one `fs.writeSync` of one JSON line per event, on a file opened
 * with `'a'`, so a line is on disk the moment the event happens, even if the process is
 * SIGKILLed right after.
 */
export class LedgerWriter {
  private readonly fd: number;

  constructor(
    path: string,
    private readonly instance: string,
    private readonly skewMs: number,
  ) {
    this.fd = openSync(path, 'a');
  }

  /** Appends one line, stamped with the instance id, the monotonic, own and real clocks. */
  write(line: Omit<LedgerLine, 'instance' | 'mono' | 'wall' | 'real'>): void {
    const wall = Date.now();
    const full: LedgerLine = {
      ...line,
      instance: this.instance,
      mono: monoNow(),
      wall,
      real: wall - this.skewMs,
    };
    writeSync(this.fd, `${JSON.stringify(full)}\n`);
  }

  /** Closes the file. */
  close(): void {
    closeSync(this.fd);
  }
}

/**
 * Reads every `*.jsonl` ledger of a directory, in monotonic order. A torn last line (a process
 * killed mid-write) is ignored and counted.
 */
export function readLedgers(dir: string): { lines: LedgerLine[]; torn: number } {
  const lines: LedgerLine[] = [];
  let torn = 0;
  if (!existsSync(dir)) return { lines, torn };
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.jsonl'))) {
    for (const text of readFileSync(join(dir, file), 'utf8').split('\n')) {
      if (text === '') continue;
      try {
        lines.push(JSON.parse(text) as LedgerLine);
      } catch {
        torn++;
      }
    }
  }
  lines.sort((a, b) => a.mono - b.mono);
  return { lines, torn };
}
