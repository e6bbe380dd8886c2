import type { RedisClient } from '@fleetcron/redis-shared';
import type { Cluster, Redis } from 'ioredis';

/** Options of {@link ChannelSubscriber}. */
export interface ChannelSubscriberOptions {
  /**
   * `CLIENT SETNAME` of the subscriber connection, so operators can find it in `CLIENT LIST`.
   * Default: the client's own.
   */
  connectionName?: string;
  /**
   * Called each time the subscription takes effect on a connection: the first time and after
   * every reconnect. Messages published while the connection was down are lost; this is where
   * listeners learn that they must read everything again.
   */
  onSubscribed?: () => void;
}

/** Failed reconnects to one Cluster node before the subscriber moves to another node. */
const NODE_RECONNECTS = 3;
/** Wait before the subscriber tries another Cluster node (or the first, before any is known), ms. */
const NODE_RETRY_MS = 200;

/**
 * One pub/sub channel on a connection of its own while anyone listens: a duplicate of the
 * user's client, or on a Cluster a duplicate of one node's connection (classic pub/sub reaches
 * every node), moved to another node after {@link NODE_RECONNECTS} failed reconnects. Not
 * `Cluster.duplicate()`: its subscriber moves between nodes without an event, so nobody could
 * tell listeners that messages were lost. On every `ready` of the connection (the first and
 * each reconnect, on any node) it sends `SUBSCRIBE` and, once the server confirmed it, calls
 * `onSubscribed`: from then on no message of the channel is missed until the connection drops
 * again. The connection has a no-op `'error'` listener (it reconnects by itself) and is closed
 * when the last listener leaves.
 */
export class ChannelSubscriber {
  private readonly listeners = new Set<(message: string) => void>();
  private subscriber: Redis | null = null;
  private retry: NodeJS.Timeout | null = null;

  constructor(
    private readonly redis: RedisClient,
    private readonly channel: string,
    private readonly options: ChannelSubscriberOptions = {},
  ) {}

  /** Adds a listener of the channel's messages; returns its unsubscribe function. */
  subscribe(listener: (message: string) => void): () => void {
    this.listeners.add(listener);
    if (!this.subscriber) this.start();
    return () => {
      this.listeners.delete(listener);
      if (this.listeners.size === 0) this.stop();
    };
  }

  /** Closes the subscriber connection. */
  stop(): void {
    if (this.retry) clearTimeout(this.retry);
    this.retry = null;
    const subscriber = this.subscriber;
    this.subscriber = null;
    if (subscriber) subscriber.disconnect();
  }

  private start(): void {
    const subscriber = this.connection();
    if (!subscriber) {
      this.restartSoon(); // a Cluster whose nodes are not known yet
      return;
    }
    this.subscriber = subscriber;
    subscriber.on('error', () => {}); // reconnects by itself; 'ready' subscribes again
    subscriber.on('message', (channel: string, message: string) => {
      if (channel !== this.channel) return;
      for (const listener of this.listeners) {
        try {
          listener(message);
        } catch {
          // a listener's failure is its own
        }
      }
    });
    subscriber.on('ready', () => {
      // SUBSCRIBE again on every (re)connection: harmless beside ioredis's own re-subscribe,
      // and its reply tells when the subscription is in effect on this connection.
      subscriber.subscribe(this.channel).then(
        () => {
          if (this.subscriber === subscriber) this.options.onSubscribed?.();
        },
        () => {
          // the connection dropped again: the next 'ready' subscribes
        },
      );
    });
    if (this.redis.isCluster) {
      subscriber.once('end', () => {
        if (this.subscriber !== subscriber) return; // stopped
        this.subscriber = null;
        this.restartSoon();
      });
    }
    // A duplicate of a `lazyConnect` client waits for a first command; 'ready' needs a connect.
    if (subscriber.status === 'wait') subscriber.connect().catch(() => {});
  }

  /** Starts again after {@link NODE_RETRY_MS} if anyone still listens (Cluster only). */
  private restartSoon(): void {
    if (this.retry) return;
    this.retry = setTimeout(() => {
      this.retry = null;
      if (this.listeners.size > 0 && !this.subscriber) this.start();
    }, NODE_RETRY_MS);
    this.retry.unref();
  }

  /** A new subscriber connection, or `null` on a Cluster that knows no node yet. */
  private connection(): Redis | null {
    const name = this.options.connectionName;
    const named = name === undefined ? {} : { connectionName: name };
    if (!this.redis.isCluster) return (this.redis as Redis).duplicate(named);
    const nodes = (this.redis as Cluster).nodes('master');
    const node = nodes[Math.floor(Math.random() * nodes.length)];
    if (!node) return null;
    return node.duplicate({
      ...named,
      lazyConnect: false,
      readOnly: false,
      retryStrategy: (times: number) => (times > NODE_RECONNECTS ? null : NODE_RETRY_MS * times),
    });
  }
}
