import { defineConfig } from 'tsup';
import { baseTsup } from '../../tsup.config.base.js';

// single-attempt.ts is an entry of its own: the CLI imports it without loading etcd3 at start.
export default defineConfig({
  ...baseTsup,
  entry: ['src/index.ts', 'src/single-attempt.ts'],
});
