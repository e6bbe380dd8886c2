import { defineConfig } from 'tsup';
import { baseTsup } from '../../tsup.config.base.js';

// @fleetcron/redis-shared is internal (private, never published): bundled into this package.
export default defineConfig({
  ...baseTsup,
  noExternal: ['@fleetcron/redis-shared'],
  dts: { resolve: ['@fleetcron/redis-shared'] },
});
