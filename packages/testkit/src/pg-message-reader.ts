/** Type byte of the PostgreSQL backend's `ReadyForQuery` message: the end of every answer. */
export const READY_FOR_QUERY = 0x5a; // 'Z'

/**
 * Splits a PostgreSQL backend stream into whole messages (type byte, then an int32 length that
 * counts itself), whatever the TCP chunking. Read from the start of a connection.
 */
export class PgMessageReader {
  private pending: Buffer = Buffer.alloc(0);

  /** Adds `chunk` and returns the messages it completes, in order (a tail waits for more). */
  read(chunk: Buffer): Buffer[] {
    this.pending = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]);
    const messages: Buffer[] = [];
    while (this.pending.length >= 5) {
      const size = 1 + this.pending.readInt32BE(1);
      if (this.pending.length < size) break;
      messages.push(this.pending.subarray(0, size));
      this.pending = this.pending.subarray(size);
    }
    return messages;
  }
}
