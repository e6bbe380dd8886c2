import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import type { LedgerEntry } from './ledger.js';

/**
 * Reads a ledger file (see `Ledger`) as it grows: each {@link LedgerTail.next} returns only the
 * complete lines appended since the previous call, so a scenario that polls a ledger of
 * hundreds of thousands of lines parses each line once.
 */
export class LedgerTail {
  private offset = 0;
  private rest = '';
  private readonly fd: number;

  /** Opens `path` for reading from its start. */
  constructor(path: string) {
    this.fd = openSync(path, 'r');
  }

  /** The complete lines appended since the last call (a line still being written waits). */
  next(): LedgerEntry[] {
    const size = fstatSync(this.fd).size;
    if (size <= this.offset) return [];
    const buffer = Buffer.alloc(size - this.offset);
    const read = readSync(this.fd, buffer, 0, buffer.length, this.offset);
    this.offset += read;
    const text = this.rest + buffer.toString('utf8', 0, read);
    const end = text.lastIndexOf('\n') + 1;
    this.rest = text.slice(end);
    return text
      .slice(0, end)
      .split('\n')
      .filter((line) => line.length > 0)
      .map((line) => JSON.parse(line) as LedgerEntry);
  }

  /** Closes the file; idempotent. */
  close(): void {
    try {
      closeSync(this.fd);
    } catch {
      // already closed
    }
  }
}
