import net from 'node:net';

/**
 * A TCP forwarder on a loopback port whose traffic can be stalled, as a network stall would, or
 * moved to another target, as a virtual IP moved to a promoted standby.
 */
export interface StallLink {
  /** The loopback port clients connect to instead of the target's. */
  readonly port: number;
  /** Connections open through the link now. */
  readonly connections: number;
  /**
   * Stops every byte in both directions, on open connections and on connections made from now
   * on (they are accepted, as a SYN would be answered by a half-dead route, but nothing reaches
   * the target). Nothing is lost: bytes wait until {@link StallLink.flow}, as TCP retransmits.
   */
  stall(): void;
  /** Lets bytes through again. No-op when flowing. */
  flow(): void;
  /**
   * Sends new connections to `target` from now on and closes every open one, as a virtual IP
   * moved to another server does (clients see their connections drop and reconnect).
   */
  moveTo(target: { host?: string; port: number }): void;
  /** Closes the listener and every connection through the link. Idempotent. */
  close(): Promise<void>;
}

/**
 * Starts a {@link StallLink} to `target` (a loopback server the testkit started). For faults no
 * signal can make: a server that is alive but unreachable (a frozen network path, a member cut
 * from its clients), and for one address that follows a failover (`moveTo`).
 */
export async function startStallLink(target: { host?: string; port: number }): Promise<StallLink> {
  let to = { host: target.host ?? '127.0.0.1', port: target.port };
  let stalled = false;
  const sockets = new Set<net.Socket>();
  const waiting: (() => void)[] = [];
  const track = (socket: net.Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
    if (stalled) socket.pause();
  };
  const server = net.createServer((client) => {
    track(client);
    client.pause();
    const open = () => {
      if (client.destroyed) return;
      const upstream = net.connect(to);
      track(upstream);
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
      // Plain 'data' forwarding, not pipe(): pipe() resumes a source on 'drain', past a stall.
      client.on('data', (chunk) => upstream.write(chunk));
      upstream.on('data', (chunk) => client.write(chunk));
      if (!stalled) client.resume();
    };
    if (stalled) waiting.push(open);
    else open();
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const address = server.address();
  if (!address || typeof address === 'string') throw new Error('stall link: no port');
  return {
    port: address.port,
    get connections() {
      return Math.ceil(sockets.size / 2);
    },
    stall() {
      stalled = true;
      for (const socket of sockets) socket.pause();
    },
    flow() {
      if (!stalled) return;
      stalled = false;
      for (const socket of sockets) socket.resume();
      for (const open of waiting.splice(0)) open();
    },
    moveTo(next) {
      to = { host: next.host ?? '127.0.0.1', port: next.port };
      for (const socket of sockets) socket.destroy();
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      waiting.length = 0;
      if (server.listening) await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
