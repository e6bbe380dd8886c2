import type { RedisClient } from '@fleetcron/redis-shared';
import type { Cluster, Redis } from 'ioredis';

/** Options of {@link ChannelSubscriber}. */
export interface ChannelSubscriberOptions {
  /**
   * `CLIENT SETNAME` of the subscriber connection (single-node and Sentinel clients; a Cluster
   * keeps its own), so operators can find it in `CLIENT LIST`. Default: the client's own.
   */
  connectionName?: string;
  /**
   * Called each time the subscription takes effect on a connection: the first time and after
   * every reconnect. Messages published while the connection was down are lost; this is where
   * listeners learn that they must read everything again.
   */
  onSubscribed?: () => void;
}

/**
 * One pub/sub channel on a connection of its own (a duplicate of the user's client) while anyone
 * listens. On every `ready` of that connection (the first and each reconnect) it sends
 * `SUBSCRIBE` and, once the server confirmed it, calls `onSubscribed`: from then on no message
 * of the channel is missed until the connection drops again. The duplicate has a no-op `'error'`
 * listener (it reconnects by itself) and is closed when the last listener leaves.
 */
export class ChannelSubscriber {
  private readonly listeners = new Set<(message: string) => void>();
  private subscriber: RedisClient | null = null;

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
    const subscriber = this.subscriber;
    this.subscriber = null;
    if (subscriber) subscriber.disconnect();
  }

  private start(): void {
    const subscriber = this.duplicate();
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
    // A duplicate of a `lazyConnect` client waits for a first command; 'ready' needs a connect.
    if (subscriber.status === 'wait') subscriber.connect().catch(() => {});
  }

  private duplicate(): RedisClient {
    // Redis and Cluster both have duplicate(); their signatures differ (isCluster tells which).
    if (this.redis.isCluster) return (this.redis as Cluster).duplicate();
    const name = this.options.connectionName;
    return (this.redis as Redis).duplicate(name === undefined ? {} : { connectionName: name });
  }
}
