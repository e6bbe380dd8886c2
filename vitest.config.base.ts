import { defineConfig, type ViteUserConfig } from 'vitest/config';

// No `module` condition: some packages (@opentelemetry/api) map it to ESM builds with
// extensionless imports that Node cannot load when vitest externalizes them.
const conditions = ['source', 'node', 'default'];

/**
 * Shared vitest settings. Workspace packages resolve to their TypeScript sources through the
 * `source` export condition, so tests never need a prior build. Each package writes a JSON report
 * to `.reports/vitest.json`, which `.ci/run` sums into one `N passed, N failed` line.
 */
export function baseVitest(overrides: ViteUserConfig['test'] = {}): ViteUserConfig {
  return defineConfig({
    resolve: { conditions },
    ssr: { resolve: { conditions } },
    test: {
      include: ['test/**/*.test.ts', 'src/**/*.test.ts'],
      testTimeout: 30_000,
      hookTimeout: 60_000,
      reporters: ['default', ['json', { outputFile: '.reports/vitest.json' }]],
      ...overrides,
    },
  });
}
