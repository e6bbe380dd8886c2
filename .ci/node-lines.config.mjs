// The Node lines besides the machine's (Node 20 runs the whole suite) and what runs on each of
// them: read by .ci/node-lines.mjs (runs them) and .ci/count-tests.mjs (expects their reports).

/** Exact versions, installed from the npm registry as `node-<platform>-<arch>` (the binary). */
export const NODE_LINES = ['24.22.3', '22.23.5'];

/**
 * Test runs on each line: a package folder and its test files (none: all of them). Core, the
 * SQLite packages (libsql's native binary per Node line) and one server backend's lock
 * conformance (Redis: the cheapest server to start).
 */
export const LINE_SUITES = [
  { dir: 'packages/core', files: [] },
  { dir: 'packages/store-sqlite', files: [] },
  {
    dir: 'packages/lock-sqlite',
    files: ['test/conformance.test.ts', 'test/claim-many.test.ts', 'test/driver-missing.test.ts'],
  },
  { dir: 'packages/lock-redis', files: ['test/lock.conformance.test.ts'] },
];

/** Where a suite's vitest JSON report goes on a line, relative to its package folder. */
export const lineReport = (version) => `.reports/node-${version}.json`;
