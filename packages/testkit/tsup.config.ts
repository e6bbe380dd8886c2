import { defineConfig } from 'tsup';
import { baseTsup } from '../../tsup.config.base.js';

export default defineConfig({
  ...baseTsup,
  // ESM only: the vitest entries import vitest, which is ESM only.
  format: ['esm'],
  entry: [
    'src/index.ts',
    'src/global-setup.ts',
    'src/global-setup/postgres.ts',
    'src/global-setup/redis.ts',
    'src/global-setup/etcd.ts',
    'src/vitest/index.ts',
  ],
  // One chunk for the code the entries share: the servers the global setup starts are the same
  // classes (and the same reaper, the same container-runtime check) as the main entry's.
  splitting: true,
  // Optional peers, loaded lazily (pg, testcontainers) or only by the vitest entries.
  external: ['testcontainers', 'pg', 'vitest'],
});
