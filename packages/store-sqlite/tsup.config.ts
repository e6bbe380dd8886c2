import { defineConfig } from 'tsup';
import { baseTsup } from '../../tsup.config.base.js';

// operations.ts is loaded by URL in the worker thread, so it is an entry of its own.
export default defineConfig({ ...baseTsup, entry: ['src/index.ts', 'src/operations.ts'] });
