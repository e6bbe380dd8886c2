/** Type byte of the PostgreSQL backend's `ReadyForQuery` message: the end of every answer. */
export const READY_FOR_QUERY = 0x5a; // 'Z'

/**
 * Splits a PostgreSQL backend stream into whole messages (type byte, then an int32 length that
 * counts itself), whatever the TCP chunking. Read from the start of a connection.
 */
export class PgMessageReader {
  private pending: Buffer = Buffer.alloc(0);
  private bareBytes = 0;

  /**
   * The client asked for encryption (`SSLRequest`, `GSSENCRequest`): the server answers with one
   * bare byte (`N`, or `S`/`G` to start TLS/GSS, which cannot be read further), read as a message
   * of its own.
   */
  expectBareByte(): void {
    this.bareBytes += 1;
  }

  /** Adds `chunk` and returns the messages it completes, in order (a tail waits for more). */
  read(chunk: Buffer): Buffer[] {
    this.pending = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]);
    const messages: Buffer[] = [];
    while (this.bareBytes > 0 && this.pending.length > 0) {
      this.bareBytes -= 1;
      messages.push(this.pending.subarray(0, 1));
      this.pending = this.pending.subarray(1);
    }
    while (this.pending.length >= 5) {
      const size = 1 + this.pending.readInt32BE(1);
      if (this.pending.length < size) break;
      messages.push(this.pending.subarray(0, size));
      this.pending = this.pending.subarray(size);
    }
    return messages;
  }
}

/** Request codes of the startup packets the server answers with one bare byte. */
const ENCRYPTION_REQUESTS = new Set([80877103, 80877104]); // SSLRequest, GSSENCRequest

/** Whether `chunk` is a client's `SSLRequest` or `GSSENCRequest` (length 8, then the code). */
export function isEncryptionRequest(chunk: Buffer): boolean {
  return (
    chunk.length === 8 &&
    chunk.readInt32BE(0) === 8 &&
    ENCRYPTION_REQUESTS.has(chunk.readInt32BE(4))
  );
}
