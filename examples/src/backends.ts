import { type Clock, type Lock, MemoryLock, MemoryStore, type Store } from '@fleetcron/core';

/** Backend names the demo accepts on `--backend`. */
export const BACKEND_NAMES = ['sqlite', 'memory', 'postgres', 'redis', 'etcd'] as const;

/** A backend name. */
export type BackendName = (typeof BACKEND_NAMES)[number];

/** What a demo backend provides: one Lock (and optionally a Store) shared by every instance. */
export interface DemoBackend {
  lock: Lock;
  store?: Store;
  /** Closes what `openBackend` created (clients, servers). */
  close(): Promise<void>;
}

/**
 * Maps a backend name to a ready Lock (+ Store). Each real backend lives in `backends/<name>.ts`
 * and is loaded only when chosen, so `--backend memory` loads no client library. Adapter authors:
 * add a file there that builds the client (and a throwaway server from @fleetcron/testkit) and
 * returns it with `close`, then add its case here.
 */
export async function openBackend(name: string, options: { clock: Clock }): Promise<DemoBackend> {
  switch (name) {
    case 'memory':
      // one in-process lock shared by the three simulated instances
      return {
        lock: new MemoryLock({ clock: options.clock }),
        store: new MemoryStore(),
        close: async () => {},
      };
    case 'sqlite':
      return (await import('./backends/sqlite.js')).openSqlite();
    case 'redis':
      return (await import('./backends/redis.js')).openRedis();
    case 'etcd':
      return (await import('./backends/etcd.js')).openEtcd(options.clock);
    case 'postgres':
      return (await import('./backends/postgres.js')).openPostgres();
    default:
      throw new Error(
        `unknown backend "${name}": use one of ${BACKEND_NAMES.join(', ')} (--backend memory).`,
      );
  }
}
