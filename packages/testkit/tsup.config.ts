import { defineConfig } from 'tsup';
import { baseTsup } from '../../tsup.config.base.js';

export default defineConfig({
  ...baseTsup,
  // Private and ESM only: vitest global setups import it.
  format: ['esm'],
  entry: [
    'src/index.ts',
    'src/global-setup.ts',
    'src/global-setup/postgres.ts',
    'src/global-setup/redis.ts',
    'src/global-setup/etcd.ts',
    'src/vitest/index.ts',
  ],
  // Loaded lazily, only when a container runtime answers.
  external: ['testcontainers', 'pg', 'vitest'],
});
