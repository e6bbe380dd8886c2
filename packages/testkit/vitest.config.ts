import type { ViteUserConfig } from 'vitest/config';
import { baseVitest } from '../../vitest.config.base.js';

// The base config resolves with the `import` condition, which vitest also passes to Node as
// `--conditions import`: `require('pg-pool')` inside pg then loads pg-pool's ESM build and pg
// fails at load ("Class extends value [object Module]"). Keep `source` and let Node pick
// `import`/`require` by itself (same fix as packages/lock-postgres).
const conditions = ['source', 'module', 'node', 'default'];
const base = baseVitest({
  // The shared servers for test/global-setup.test.ts, through the published subpath.
  globalSetup: ['@fleetcron/testkit/global-setup'],
});

const config: ViteUserConfig = {
  ...base,
  resolve: { ...base.resolve, conditions },
  ssr: { ...base.ssr, resolve: { ...base.ssr?.resolve, conditions } },
};

export default config;
