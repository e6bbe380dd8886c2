import { createHash } from 'node:crypto';
import type { Logger } from '@fleetcron/core';
import { decodeText } from '@fleetcron/postgres-shared';
import type { Notification, Pool, PoolClient } from 'pg';

/** Wait before listening again after the listening connection failed, ms. */
const RELISTEN_MS = 1000;

/** The NOTIFY channel of a store namespace (a short identifier, the same on every client). */
export function runRequestChannel(schema: string, table: string): string {
  const digest = createHash('sha256').update(`${schema}.${table}`, 'utf8').digest('hex');
  return `fleetcron_runreq_${digest.slice(0, 24)}`;
}

/**
 * LISTENs for run-request notifications on one connection checked out of the pool while anyone
 * listens (it holds one pool slot), and calls the listeners with the job name. When that
 * connection fails it is dropped and LISTEN is retried every second; notifications sent in
 * between are lost, which is why instances also poll.
 */
export class RunRequestListener {
  private readonly listeners = new Set<(job: string) => void>();
  private client: PoolClient | null = null;
  private connecting = false;
  private retry: ReturnType<typeof setTimeout> | null = null;

  constructor(
    private readonly pool: Pool,
    private readonly channel: string,
    private readonly logger: Logger,
  ) {}

  /** Adds a listener; returns its unsubscribe function. */
  subscribe(listener: (job: string) => void): () => void {
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
    } catch (error) {
      if (client) client.release(error instanceof Error ? error : true);
      this.logger.warn(
        'postgres store: LISTEN for run requests failed; retrying (instances poll meanwhile)',
        {
          error,
        },
      );
      this.scheduleRetry();
    }
  }

  private lost(client: PoolClient, error: Error): void {
    if (this.client !== client) return;
    this.client = null;
    client.removeAllListeners('notification');
    client.release(error);
    this.logger.warn('postgres store: the LISTEN connection failed; listening again', { error });
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
    const job = decodeText(message.payload ?? '');
    for (const listener of this.listeners) {
      try {
        listener(job);
      } catch (error) {
        this.logger.warn('postgres store: a run-request listener threw', { error });
      }
    }
  }
}
