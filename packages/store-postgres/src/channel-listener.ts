import { createHash } from 'node:crypto';
import type { Logger } from '@fleetcron/core';
import { decodeText } from '@fleetcron/postgres-shared';
import type { Notification, Pool, PoolClient } from 'pg';

/** Wait before listening again after the listening connection failed, ms. */
const RELISTEN_MS = 1000;

/** The run-request NOTIFY channel of a store namespace (short, the same on every client). */
export function runRequestChannel(schema: string, table: string): string {
  return `fleetcron_runreq_${digest(schema, table)}`;
}

/** The stored-schedule NOTIFY channel of a store namespace (payload: the schedule id). */
export function scheduleChannel(schema: string, table: string): string {
  return `fleetcron_sched_${digest(schema, table)}`;
}

function digest(schema: string, table: string): string {
  return createHash('sha256').update(`${schema}.${table}`, 'utf8').digest('hex').slice(0, 24);
}

/** What a {@link ChannelListener} listens for (logs) and whom it tells when LISTEN starts. */
export interface ChannelListenerOptions {
  /** What the notifications are about, for log messages (`run requests`, `schedule changes`). */
  what: string;
  /**
   * Called each time LISTEN takes effect on a new connection (the first time and after every
   * reconnect): notifications sent before it may have been missed, so readers resync.
   */
  onListen?: () => void;
}

/**
 * LISTENs on one channel on one connection checked out of the pool while anyone listens (it
 * holds one pool slot), and calls the listeners with each payload. When that connection fails
 * it is dropped and LISTEN is retried every second; notifications sent in between are lost,
 * which is why readers also poll, or resync on `onListen`.
 */
export class ChannelListener {
  private readonly listeners = new Set<(payload: string) => void>();
  private client: PoolClient | null = null;
  private connecting = false;
  private retry: ReturnType<typeof setTimeout> | null = null;

  constructor(
    private readonly pool: Pool,
    private readonly channel: string,
    private readonly logger: Logger,
    private readonly options: ChannelListenerOptions,
  ) {}

  /** Adds a listener; returns its unsubscribe function. */
  subscribe(listener: (payload: string) => void): () => void {
    this.listeners.add(listener);
    this.ensureListening();
    return () => {
      this.listeners.delete(listener);
      if (this.listeners.size === 0) this.stop();
    };
  }

  /** Stops listening and returns the connection. */
  stop(): void {
    if (this.retry) clearTimeout(this.retry);
    this.retry = null;
    const client = this.client;
    this.client = null;
    if (client) {
      client.removeAllListeners('notification');
      client.query(`UNLISTEN "${this.channel}"`).then(
        () => client.release(),
        (error: unknown) => client.release(error instanceof Error ? error : true),
      );
    }
  }

  private ensureListening(): void {
    if (this.client || this.connecting || this.retry || this.listeners.size === 0) return;
    this.connecting = true;
    void this.listen().finally(() => {
      this.connecting = false;
    });
  }

  private async listen(): Promise<void> {
    let client: PoolClient | null = null;
    try {
      client = await this.pool.connect();
      const onError = (error: Error) => this.lost(client!, error);
      client.on('error', onError);
      client.on('notification', (message: Notification) => this.notify(message));
      await client.query(`LISTEN "${this.channel}"`);
      if (this.listeners.size === 0) {
        client.removeListener('error', onError);
        client.removeAllListeners('notification');
        client.release();
        return;
      }
      this.client = client;
      this.tell(() => this.options.onListen?.());
    } catch (error) {
      if (client) client.release(error instanceof Error ? error : true);
      this.logger.warn(
        `postgres store: LISTEN for ${this.options.what} failed; retrying (readers poll meanwhile)`,
        { error },
      );
      this.scheduleRetry();
    }
  }

  private lost(client: PoolClient, error: Error): void {
    if (this.client !== client) return;
    this.client = null;
    client.removeAllListeners('notification');
    client.release(error);
    this.logger.warn(
      `postgres store: the LISTEN connection for ${this.options.what} failed; listening again`,
      { error },
    );
    this.scheduleRetry();
  }

  private scheduleRetry(): void {
    if (this.retry || this.listeners.size === 0) return;
    this.retry = setTimeout(() => {
      this.retry = null;
      this.ensureListening();
    }, RELISTEN_MS);
    this.retry.unref?.();
  }

  private notify(message: Notification): void {
    if (message.channel !== this.channel) return;
    const payload = decodeText(message.payload ?? '');
    for (const listener of this.listeners) this.tell(() => listener(payload));
  }

  private tell(call: () => void): void {
    try {
      call();
    } catch (error) {
      this.logger.warn(`postgres store: a listener for ${this.options.what} threw`, { error });
    }
  }
}
