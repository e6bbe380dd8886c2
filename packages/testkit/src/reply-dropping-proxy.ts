import { connect, createServer, type Server, type Socket } from 'node:net';

/**
 * A TCP proxy in front of a real Redis server, to lose one reply on purpose: the request reaches
 * the server and runs, then the connection is cut before the answer gets back (what a network
 * failure after the server's write looks like to the client).
 */
export class ReplyDroppingProxy {
  /** Set to cut the connection instead of forwarding the next reply from the server. */
  dropNextReply = false;
  /** How many replies were dropped so far. */
  dropped = 0;
  /** Set to refuse new connections (they are closed at once), as a server that is down would. */
  refuseConnections = false;
  /** Set to swallow requests: they are written by the client but never reach the server. */
  swallowRequests = false;
  private readonly server: Server;
  private readonly sockets = new Set<Socket>();

  private constructor(upstreamPort: number, upstreamHost: string) {
    this.server = createServer((client) => {
      if (this.refuseConnections) {
        client.on('error', () => {});
        client.destroy();
        return;
      }
      const upstream = connect(upstreamPort, upstreamHost);
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.on('close', () => this.sockets.delete(s));
        s.on('error', () => {});
      }
      client.on('data', (chunk) => {
        if (!this.swallowRequests) upstream.write(chunk);
      });
      upstream.on('data', (chunk) => {
        if (this.dropNextReply) {
          this.dropNextReply = false;
          this.dropped++;
          client.destroy();
          upstream.destroy();
          return;
        }
        client.write(chunk);
      });
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
  }

  /** Starts a proxy to the Redis server at `upstreamUrl`, listening on a free local port. */
  static async start(upstreamUrl: string): Promise<ReplyDroppingProxy> {
    const { hostname, port } = new URL(upstreamUrl);
    const proxy = new ReplyDroppingProxy(Number(port || 6379), hostname);
    await new Promise<void>((resolve) => proxy.server.listen(0, '127.0.0.1', resolve));
    return proxy;
  }

  /** `redis://127.0.0.1:PORT` of the proxy. */
  get url(): string {
    const address = this.server.address();
    if (address === null || typeof address === 'string') throw new Error('proxy not listening');
    return `redis://127.0.0.1:${address.port}`;
  }

  /** Cuts every connection through the proxy (clients reconnect through it). */
  cutAll(): void {
    for (const s of this.sockets) s.destroy();
  }

  /** Closes the proxy and every connection through it. */
  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
