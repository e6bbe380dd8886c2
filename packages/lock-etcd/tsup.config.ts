import { defineConfig } from 'tsup';
import { baseTsup } from '../../tsup.config.base.js';

// @fleetcron/etcd-shared is internal (private, never published): bundled into this package.
export default defineConfig({
  ...baseTsup,
  noExternal: ['@fleetcron/etcd-shared'],
  dts: { resolve: ['@fleetcron/etcd-shared'] },
});
