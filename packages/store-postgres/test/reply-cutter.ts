import net from 'node:net';

/**
 * A TCP forwarder to PostgreSQL that can lose one statement's reply: armed with
 * {@link ReplyCutter.cutNextReply}, it forwards the next statement to the server, holds back every
 * message of the server's answer until `ReadyForQuery` (so the statement's implicit transaction
 * has committed), then closes the client's connection without passing any of it on. The client
 * sees its connection drop with the statement's outcome unknown, as when a network path fails
 * just after the server answered.
 */
export interface ReplyCutter {
  /** The loopback port clients connect to instead of the server's. */
  readonly port: number;
  /** How many replies were lost so far. */
  readonly cuts: number;
  /** Loses the answer to the next statement sent (after its connection's startup; use a pool of one). */
  cutNextReply(): void;
  /** Closes the listener and every connection. Idempotent. */
  close(): Promise<void>;
}

/** Type byte of the backend's `ReadyForQuery` message (the end of every answer). */
const READY_FOR_QUERY = 0x5a; // 'Z'

/** Starts a {@link ReplyCutter} to the PostgreSQL server on loopback `port`. */
export async function startReplyCutter(port: number): Promise<ReplyCutter> {
  let armed = false;
  let cuts = 0;
  const sockets = new Set<net.Socket>();
  const track = (socket: net.Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
  };
  const server = net.createServer((client) => {
    track(client);
    const upstream = net.connect({ host: '127.0.0.1', port });
    track(upstream);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
    let ready = false; // the startup exchange ended (first ReadyForQuery): statements follow
    let cutting = false;
    client.on('data', (chunk) => {
      if (armed && ready) {
        armed = false;
        cutting = true; // this connection's next answer is the one to lose
      }
      upstream.write(chunk);
    });
    // Backend messages are framed (type byte, int32 length counting itself): parse from the
    // start of the connection so the end of the answer is found whatever the chunking.
    let pending = Buffer.alloc(0);
    upstream.on('data', (chunk) => {
      pending = Buffer.concat([pending, chunk]);
      while (pending.length >= 5) {
        const size = 1 + pending.readInt32BE(1);
        if (pending.length < size) break;
        const message = pending.subarray(0, size);
        pending = pending.subarray(size);
        if (!cutting) {
          if (message[0] === READY_FOR_QUERY) ready = true;
          client.write(message);
        } else if (message[0] === READY_FOR_QUERY) {
          cuts += 1;
          client.destroy();
          upstream.destroy();
          return;
        }
      }
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const address = server.address();
  if (!address || typeof address === 'string') throw new Error('reply cutter: no port');
  return {
    port: address.port,
    get cuts() {
      return cuts;
    },
    cutNextReply() {
      armed = true;
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      if (server.listening) await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
