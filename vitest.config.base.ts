import { defineConfig, type ViteUserConfig } from 'vitest/config';
import { longFilesFirst } from './packages/testkit/src/vitest/long-files-first.js';

// No `module` condition: some packages (@opentelemetry/api) map it to ESM builds with
// extensionless imports that Node cannot load when vitest externalizes them.
const conditions = ['source', 'node', 'default'];

/**
 * Shared vitest settings. Workspace packages resolve to their TypeScript sources through the
 * `source` export condition, so tests never need a prior build. Each package writes a JSON report
 * to `.reports/vitest.json` (or `FLEETCRON_VITEST_REPORT`), which `.ci/run` sums into one
 * `N passed, N failed` line.
 */
export function baseVitest(overrides: ViteUserConfig['test'] = {}): ViteUserConfig {
  return defineConfig({
    resolve: { conditions },
    ssr: { resolve: { conditions } },
    test: {
      include: ['test/**/*.test.ts', 'src/**/*.test.ts'],
      testTimeout: 30_000,
      hookTimeout: 60_000,
      // FLEETCRON_VITEST_REPORT: another report file (.ci/node-lines.mjs, a run on another Node line)
      reporters: [
        'default',
        ['json', { outputFile: process.env.FLEETCRON_VITEST_REPORT ?? '.reports/vitest.json' }],
      ],
      ...overrides,
    },
  });
}

/** The long files of a lock package, longest first: the fleet suite's two parts, then the lock suite. */
export const LOCK_LONG_FILES = [
  'fleet-part2.conformance.test.ts',
  'fleet-part1.conformance.test.ts',
  'conformance.test.ts',
];

/**
 * Settings of a lock package whose fleet suite is split in two files (`runFleetConformance`'s
 * `part`). Its files mostly wait on real time (child processes, leases running out), so two run
 * side by side even on a 2-core machine, the long ones (`longFiles`, longest first) started first
 * so that they run beside the short ones.
 */
export function lockSuiteVitest(
  overrides: ViteUserConfig['test'] = {},
  longFiles: string[] = LOCK_LONG_FILES,
): ViteUserConfig {
  return baseVitest({
    maxWorkers: 2,
    sequence: { sequencer: longFilesFirst(...longFiles) },
    ...overrides,
  });
}
