import { defineConfig } from 'tsup';
import { baseTsup } from '../../tsup.config.base.js';

// ESM only (an application: the `fleetcron` bin, plus `runCli` for programs that embed it).
// `dist/bin.js` keeps the source's `#!/usr/bin/env node` line. @fleetcron/etcd-shared is internal
// (private, never published): bundled into this package.
export default defineConfig({
  ...baseTsup,
  entry: { index: 'src/index.ts', bin: 'src/bin.ts' },
  format: ['esm'],
  noExternal: ['@fleetcron/etcd-shared'],
  dts: { resolve: ['@fleetcron/etcd-shared'] },
});
