import { defineConfig } from 'tsup';
import { baseTsup } from '../../tsup.config.base.js';

// worker.ts is loaded by URL in a worker thread, so it is an entry of its own; statement-cache.ts
// is the one value the operation modules (also loaded by URL) import, so it has its own entry.
// ESM only: the worker thread's module is found through `import.meta.url`.
export default defineConfig({
  ...baseTsup,
  format: ['esm'],
  entry: ['src/index.ts', 'src/worker.ts', 'src/statement-cache.ts'],
  // declarations of the index alone, whole: with statement-cache.ts as a declaration entry too,
  // the types both use went to a shared chunk that the lock's and store's bundled declarations
  // then imported without shipping it (attw: internal resolution error in the pack test)
  dts: { entry: ['src/index.ts'] },
});
