import { defineConfig } from 'tsup';
import { baseTsup } from '../../tsup.config.base.js';

// @fleetcron/sqlite-shared is internal (private, never published): bundled into this package.
// The worker thread loads two files by URL, next to dist/index.js: worker.js (the thread's entry,
// from sqlite-shared) and operations.js (this package's statements). Both are entries.
export default defineConfig({
  ...baseTsup,
  format: ['esm'], // import.meta.url locates the worker's files
  entry: {
    index: 'src/index.ts',
    operations: 'src/operations.ts',
    worker: '../sqlite-shared/src/worker.ts',
  },
  noExternal: ['@fleetcron/sqlite-shared'],
  dts: { entry: 'src/index.ts', resolve: ['@fleetcron/sqlite-shared'] },
});
