import { baseVitest } from '../../vitest.config.base.js';

// The base config resolves with the `import` condition, which vitest also passes to Node as
// `--conditions import`: `require('pg-pool')` inside pg then loads pg-pool's ESM build and pg
// fails at load ("Class extends value [object Module]"). Keep `source` (workspace packages
// resolve to src/) and let Node pick `import`/`require` by itself.
const conditions = ['source', 'module', 'node', 'default'];
const base = baseVitest();

export default {
  ...base,
  resolve: { ...base.resolve, conditions },
  ssr: { ...base.ssr, resolve: { ...base.ssr?.resolve, conditions } },
};
