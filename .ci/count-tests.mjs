// Sums the vitest JSON reports every package wrote (.reports/vitest.json, Node 20) and the runs on
// the other Node lines (.ci/node-lines.mjs: .reports/node-<version>.json) into one line:
// "N passed, N failed". A package with a test/ folder but no report counts as one failure (so
// does a line's suite without its report), and so does a test file that failed to load, so a run
// that crashed can never look green. Each Node line's own counts are printed before, on stderr.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { LINE_SUITES, lineReport, NODE_LINES } from './node-lines.config.mjs';

const dirs = [
  ...readdirSync('packages').map((name) => join('packages', name)),
  'benchmarks',
  'examples',
].filter((dir) => existsSync(join(dir, 'test')));

let passed = 0;
let failed = 0;

/** Adds one vitest JSON report to the totals and returns its own counts (a missing one fails). */
function count(label, report) {
  if (!existsSync(report)) {
    console.error(`${label}: no test report (its test run did not finish)`);
    failed += 1;
    return { passed: 0, failed: 1 };
  }
  const json = JSON.parse(readFileSync(report, 'utf8'));
  const loadFailures = (json.testResults ?? []).filter(
    (file) => file.status === 'failed' && (file.assertionResults ?? []).length === 0,
  ).length;
  const own = {
    passed: json.numPassedTests ?? 0,
    failed: (json.numFailedTests ?? 0) + loadFailures,
  };
  passed += own.passed;
  failed += own.failed;
  console.error(
    `${label}: ${json.numPassedTests} passed, ${json.numFailedTests} failed, ${loadFailures} files failed to load`,
  );
  return own;
}

for (const dir of dirs) count(dir, join(dir, '.reports', 'vitest.json'));
for (const version of NODE_LINES) {
  const line = { passed: 0, failed: 0 };
  for (const suite of LINE_SUITES) {
    const own = count(`Node ${version} ${suite.dir}`, join(suite.dir, lineReport(version)));
    line.passed += own.passed;
    line.failed += own.failed;
  }
  console.error(`Node ${version} (added in below): ${line.passed} passed, ${line.failed} failed`);
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed > 0 ? 1 : 0);
