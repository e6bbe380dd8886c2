import { connect, createServer, type Server, type Socket } from 'node:net';
import { InvalidOptionError } from './errors.js';
import { isEncryptionRequest, PgMessageReader, READY_FOR_QUERY } from './pg-message-reader.js';

/**
 * How a {@link ReplyDroppingProxy} reads the server's bytes to know where a reply ends.
 * - `bytes`: no framing; the next reply is whatever the server sends next (Redis, one command
 *   at a time).
 * - `postgres`: PostgreSQL backend messages; a reply ends with `ReadyForQuery`, the first one
 *   ends the connection's startup.
 */
export type ReplyProtocol = 'bytes' | 'postgres';

/** Options of {@link ReplyDroppingProxy.start}. */
export interface ReplyDroppingProxyOptions {
  /** How replies are framed (see {@link ReplyProtocol}). Default `bytes`. */
  protocol?: ReplyProtocol;
}

/** Ports of the URL schemes the proxy knows, for an upstream URL that names none. */
const DEFAULT_PORTS: Record<string, number> = {
  'redis:': 6379,
  'postgres:': 5432,
  'postgresql:': 5432,
};

/** One client connection through the proxy and the server connection it is forwarded to. */
interface Link {
  readonly client: Socket;
  readonly upstream: Socket;
  /** The connection's startup is over (`postgres`: first `ReadyForQuery`): requests follow. */
  ready: boolean;
  /** The reply under way on this connection is being lost: the connection is cut at its end. */
  losing: boolean;
  /** `postgres`: the reader of the server's messages on this connection. */
  readonly reader: PgMessageReader | null;
  /** The last request bytes, to find a {@link ReplyDroppingProxy.dropRepliesAfter} marker split across chunks. */
  tail: Buffer;
}

/**
 * A TCP proxy in front of a real server, to lose replies on purpose: the request reaches the
 * server and runs, then its answer never gets back (what a network failure after the server's
 * write looks like to the client). Faults no signal to the server can make.
 *
 * Two ways to lose a reply:
 * - {@link dropNextReply}: the next reply is lost and its connection cut (the client sees the
 *   connection drop with the outcome unknown). `bytes`: cut at the reply's first byte.
 *   `postgres`: the answer to the next statement sent on a started connection is held back up to
 *   its `ReadyForQuery`, so the statement's implicit transaction has committed, then the
 *   connection is cut without passing any of it on.
 * - {@link dropRepliesAfter}: once a request carries a marker, every later reply is discarded
 *   while connections stay open, until {@link cutAll}. For multiplexed protocols (etcd's gRPC
 *   over HTTP/2) where "the next bytes" are not the reply of the request under test, and for a
 *   test that wants to see the write applied before the client learns anything.
 */
export class ReplyDroppingProxy {
  /** Set to lose the next reply (see the class); cleared when a reply is chosen to be lost. */
  dropNextReply = false;
  /** How many replies {@link dropNextReply} lost so far. */
  dropped = 0;
  /** Set to refuse new connections (they are closed at once), as a server that is down would. */
  refuseConnections = false;
  /** Set to swallow requests: they are written by the client but never reach the server. */
  swallowRequests = false;
  private readonly server: Server;
  private readonly sockets = new Set<Socket>();
  private marker: Buffer | null = null;
  private droppingAll = false;

  private constructor(
    private readonly upstream: URL,
    private readonly protocol: ReplyProtocol,
  ) {
    this.server = createServer((client) => this.accept(client));
  }

  /**
   * Starts a proxy to the server at `upstreamUrl` (`redis://…`, `postgres://…`, `http://…`),
   * listening on a free loopback port. Throws {@link InvalidOptionError} for a URL it cannot
   * read or an unknown `protocol`.
   */
  static async start(
    upstreamUrl: string,
    options: ReplyDroppingProxyOptions = {},
  ): Promise<ReplyDroppingProxy> {
    const protocol = options.protocol ?? 'bytes';
    if (protocol !== 'bytes' && protocol !== 'postgres') {
      throw new InvalidOptionError(
        'protocol',
        `unknown protocol ${JSON.stringify(protocol)}: use 'bytes' (default) or 'postgres'`,
      );
    }
    const proxy = new ReplyDroppingProxy(upstreamOf(upstreamUrl), protocol);
    await new Promise<void>((resolve, reject) => {
      proxy.server.once('error', reject);
      proxy.server.listen(0, '127.0.0.1', resolve);
    });
    return proxy;
  }

  /** The loopback port clients connect to instead of the server's. */
  get port(): number {
    const address = this.server.address();
    if (address === null || typeof address === 'string') throw new Error('proxy not listening');
    return address.port;
  }

  /** The upstream URL with the proxy's address in place of the server's (user, database kept). */
  get url(): string {
    const url = new URL(this.upstream.href);
    url.hostname = '127.0.0.1';
    url.port = String(this.port);
    return url.href.replace(/\/$/, '');
  }

  /**
   * From the first request that contains `marker` (a value as the client sends it, e.g. in a
   * gRPC message, which etcd clients send uncompressed), every reply on every connection is
   * discarded: that request reaches the server, its reply and all later ones are lost until
   * {@link cutAll}.
   */
  dropRepliesAfter(marker: string): void {
    this.marker = Buffer.from(marker);
  }

  /** Cuts every connection through the proxy (clients reconnect through it) and ends {@link dropRepliesAfter}. */
  cutAll(): void {
    for (const socket of this.sockets) socket.destroy();
    this.marker = null;
    this.droppingAll = false;
  }

  /** Closes the proxy and every connection through it. Idempotent. */
  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    if (!this.server.listening) return;
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private accept(client: Socket): void {
    if (this.refuseConnections) {
      client.on('error', () => {});
      client.destroy();
      return;
    }
    const upstream = connect(Number(this.upstream.port), this.upstream.hostname);
    for (const socket of [client, upstream]) {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
      socket.on('error', () => {});
    }
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
    const link: Link = {
      client,
      upstream,
      ready: this.protocol === 'bytes',
      losing: false,
      reader: this.protocol === 'postgres' ? new PgMessageReader() : null,
      tail: Buffer.alloc(0),
    };
    client.on('data', (chunk: Buffer) => this.request(link, chunk));
    const reader = link.reader;
    if (reader === null) {
      upstream.on('data', (chunk: Buffer) => this.reply(link, chunk, true));
    } else {
      upstream.on('data', (chunk: Buffer) => {
        for (const message of reader.read(chunk)) {
          if (!this.reply(link, message, message[0] === READY_FOR_QUERY)) return;
        }
      });
    }
  }

  /** Forwards request bytes from the client (or swallows them) and notes what they arm. */
  private request(link: Link, chunk: Buffer): void {
    if (this.swallowRequests) return;
    if (link.reader !== null && !link.ready && isEncryptionRequest(chunk)) {
      link.reader.expectBareByte();
    }
    if (this.protocol === 'postgres' && this.dropNextReply && link.ready) {
      this.dropNextReply = false;
      link.losing = true; // the answer to this statement is the one to lose
    }
    link.upstream.write(chunk);
    if (this.marker === null) return;
    const seen = Buffer.concat([link.tail, chunk]);
    if (seen.includes(this.marker)) this.droppingAll = true;
    link.tail = seen.subarray(Math.max(0, seen.length - this.marker.length));
  }

  /**
   * Passes one piece of the server's answer on, or loses it; `endsReply` when it is the last
   * piece of a reply. Returns false once the connection was cut.
   */
  private reply(link: Link, piece: Buffer, endsReply: boolean): boolean {
    if (this.droppingAll) return true;
    if (this.protocol === 'bytes' && this.dropNextReply) {
      this.dropNextReply = false;
      link.losing = true;
    }
    if (link.losing) {
      if (!endsReply) return true;
      this.dropped++;
      link.client.destroy();
      link.upstream.destroy();
      return false;
    }
    if (endsReply) link.ready = true;
    link.client.write(piece);
    return true;
  }
}

/** The host and port of `upstreamUrl`, the scheme's default port when it names none. */
function upstreamOf(upstreamUrl: string): URL {
  let url: URL;
  try {
    url = new URL(upstreamUrl);
  } catch {
    throw new InvalidOptionError(
      'upstreamUrl',
      `${JSON.stringify(upstreamUrl)} is not a URL: give the server's, e.g. redis://127.0.0.1:6379`,
    );
  }
  if (url.port === '') {
    const port = DEFAULT_PORTS[url.protocol];
    if (port === undefined) {
      throw new InvalidOptionError(
        'upstreamUrl',
        `${upstreamUrl} names no port and ${url.protocol} has no known default: add the port`,
      );
    }
    url.port = String(port);
  }
  return url;
}
