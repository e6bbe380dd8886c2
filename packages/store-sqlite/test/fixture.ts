import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { StoreFixture } from '@fleetcron/conformance';
import { SqliteStore, type SqliteStoreOptions } from '../src/index.js';

/**
 * Conformance fixtures: a new file per fixture, a `SqliteStore` (own worker thread) per
 * `newStore()`; `Store` may be a subclass (the mutants).
 */
export function storeFixtures(
  options: SqliteStoreOptions = {},
  Store: new (file: string, options: SqliteStoreOptions) => SqliteStore = SqliteStore,
): () => Promise<StoreFixture & { file: string }> {
  return async () => {
    const dir = mkdtempSync(join(tmpdir(), 'fleetcron-store-sqlite-'));
    const file = join(dir, 'fleetcron.db');
    const stores: SqliteStore[] = [];
    let closed: Promise<void> | undefined;
    return {
      file,
      async newStore() {
        const store = new Store(file, options);
        stores.push(store);
        await store.open();
        return store;
      },
      close() {
        closed ??= (async () => {
          await Promise.all(stores.map((s) => s.close()));
          rmSync(dir, { recursive: true, force: true });
        })();
        return closed;
      },
    };
  };
}
