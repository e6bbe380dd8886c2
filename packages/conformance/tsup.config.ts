import { defineConfig } from 'tsup';
import { baseTsup } from '../../tsup.config.base.js';

// ESM only: the suite runs inside vitest (ESM only) and loads fleet instances by `import.meta.url`.
export default defineConfig({ ...baseTsup, format: ['esm'] });
