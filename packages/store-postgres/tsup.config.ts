import { defineConfig } from 'tsup';
import { baseTsup } from '../../tsup.config.base.js';

// @fleetcron/postgres-shared is internal (private, never published): bundled into this package.
export default defineConfig({
  ...baseTsup,
  noExternal: ['@fleetcron/postgres-shared'],
  dts: { resolve: ['@fleetcron/postgres-shared'] },
});
