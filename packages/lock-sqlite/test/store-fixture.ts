import type { StoreFixture } from '@fleetcron/conformance';
import { SqliteStore } from '@fleetcron/store-sqlite';
import { tempFile } from './fixture.js';
import type { SqliteProcessConfig } from './process-client.js';

/**
 * The store the fleet suite's store-on scenarios run with: each fixture a new file, each
 * `newStore()` a `SqliteStore` on it, and the same for a child process (`processStore`).
 */
export function storeFixtures(): () => Promise<StoreFixture> {
  return async () => {
    const { file, remove } = tempFile('fleetcron-fleet-store-');
    const stores: SqliteStore[] = [];
    let closed: Promise<void> | undefined;
    return {
      processStore: {
        module: new URL('./process-client.ts', import.meta.url).href,
        exportName: 'openStore',
        config: { file } satisfies SqliteProcessConfig,
      },
      async newStore() {
        const store = new SqliteStore(file);
        stores.push(store);
        await store.open();
        return store;
      },
      close() {
        closed ??= (async () => {
          await Promise.all(stores.map((s) => s.close()));
          remove();
        })();
        return closed;
      },
    };
  };
}
