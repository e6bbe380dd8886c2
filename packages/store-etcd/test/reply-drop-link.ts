import net from 'node:net';

/** A TCP forwarder that can lose a server's replies while its requests still get through. */
export interface ReplyDropLink {
  /** The loopback port clients connect to instead of the server's. */
  readonly port: number;
  /**
   * Once a client sends bytes containing `marker` (a value in a request, as gRPC sends it
   * uncompressed), bytes from the server are discarded: that request reaches the server, its
   * reply and every later one are lost until {@link cut}.
   */
  dropRepliesAfter(marker: string): void;
  /** Closes every connection through the link (clients see them drop) and forwards again. */
  cut(): void;
  /** Closes the listener and every connection. Idempotent. */
  close(): Promise<void>;
}

/**
 * Starts a {@link ReplyDropLink} to `target`: the fault of a reply lost on the way back (a
 * write applied by the server whose client never hears of it), which no signal to the server
 * can make.
 */
export async function startReplyDropLink(target: {
  host: string;
  port: number;
}): Promise<ReplyDropLink> {
  let marker: Buffer | null = null;
  let dropping = false;
  const sockets = new Set<net.Socket>();
  const track = (socket: net.Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
  };
  const server = net.createServer((client) => {
    track(client);
    const upstream = net.connect(target);
    track(upstream);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
    let tail = Buffer.alloc(0); // the last bytes sent, for a marker split across chunks
    client.on('data', (chunk: Buffer) => {
      upstream.write(chunk);
      if (!marker) return;
      const seen = Buffer.concat([tail, chunk]);
      if (seen.includes(marker)) dropping = true;
      tail = seen.subarray(Math.max(0, seen.length - marker.length));
    });
    upstream.on('data', (chunk) => {
      if (!dropping) client.write(chunk);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const address = server.address();
  if (!address || typeof address === 'string') throw new Error('reply drop link: no port');
  return {
    port: address.port,
    dropRepliesAfter(text) {
      marker = Buffer.from(text);
    },
    cut() {
      for (const socket of sockets) socket.destroy();
      marker = null;
      dropping = false;
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      if (server.listening) await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
