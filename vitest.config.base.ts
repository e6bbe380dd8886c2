import { configDefaults, defineConfig, type ViteUserConfig } from 'vitest/config';
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
      // test/serial/: files that must run alone (serialVitest), after every other file
      exclude: [...configDefaults.exclude, 'test/serial/**'],
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

/** The report of a package's serial files (`pnpm test:serial`), beside `.reports/vitest.json`. */
export const SERIAL_REPORT = '.reports/vitest-serial.json';

/**
 * Settings of a package's `test/serial/` files (`pnpm test:serial`): files that load the whole
 * machine (the many-jobs restart scenarios: 8 processes, 8,000 claims every 3 s) and judge what
 * they measure only when nothing runs beside them. One file at a time, one package at a time
 * (the root `pnpm test` runs them after every other test file); report in {@link SERIAL_REPORT}.
 */
export function serialVitest(overrides: ViteUserConfig['test'] = {}): ViteUserConfig {
  return baseVitest({
    include: ['test/serial/**/*.test.ts'],
    exclude: [...configDefaults.exclude],
    fileParallelism: false,
    maxWorkers: 1,
    reporters: ['default', ['json', { outputFile: SERIAL_REPORT }]],
    ...overrides,
  });
}
