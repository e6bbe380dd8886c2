import type { RedisClient } from '@fleetcron/redis-shared';

/**
 * Subscribes to the run-request channel on a duplicate of the user's client while anyone
 * listens (ioredis re-subscribes after a reconnect); messages sent while disconnected are lost,
 * which is why instances also poll. The duplicate is closed when the last listener leaves.
 */
export class RunRequestSubscriber {
  private readonly listeners = new Set<(job: string) => void>();
  private subscriber: RedisClient | null = null;

  constructor(
    private readonly redis: RedisClient,
    private readonly channel: string,
  ) {}

  /** Adds a listener; returns its unsubscribe function. */
  subscribe(listener: (job: string) => void): () => void {
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
    // Redis and Cluster both have duplicate(); their signatures differ, so call it untyped.
    const subscriber = (this.redis as { duplicate(): RedisClient }).duplicate();
    this.subscriber = subscriber;
    subscriber.on('error', () => {}); // reconnects by itself; requests are also polled
    subscriber.on('message', (channel: string, job: string) => {
      if (channel !== this.channel) return;
      for (const listener of this.listeners) {
        try {
          listener(job);
        } catch {
          // a listener's failure is its own
        }
      }
    });
    subscriber.subscribe(this.channel).catch(() => {
      // the subscription is retried on reconnect; polling covers the gap
    });
  }
}
