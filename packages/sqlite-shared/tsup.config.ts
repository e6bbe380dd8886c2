import { defineConfig } from 'tsup';
import { baseTsup } from '../../tsup.config.base.js';

// worker.ts is loaded by URL in a worker thread, so it is an entry of its own.
export default defineConfig({ ...baseTsup, entry: ['src/index.ts', 'src/worker.ts'] });
