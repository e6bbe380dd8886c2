import type { ViteUserConfig } from 'vitest/config';
import { baseVitest } from '../../vitest.config.base.js';

// The base config resolves with the `import` condition, which vitest also passes to Node as
// `--conditions import`: `require('pg-pool')` inside pg then loads pg-pool's ESM build and pg
// fails at load ("Class extends value [object Module]"). Keep `source` (workspace packages
// resolve to src/) and let Node pick `import`/`require` by itself.
const conditions = ['source', 'module', 'node', 'default'];
// One shared PostgreSQL server per run (vitest resolves globalSetup entries as paths).
const base = baseVitest({ globalSetup: ['../testkit/src/global-setup/postgres.ts'] });

const config: ViteUserConfig = {
  ...base,
  resolve: { ...base.resolve, conditions },
  ssr: { ...base.ssr, resolve: { ...base.ssr?.resolve, conditions } },
};
export default config;
