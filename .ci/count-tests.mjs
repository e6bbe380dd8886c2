// Sums the vitest JSON reports every package wrote (.reports/vitest.json) into one line:
// "N passed, N failed". A package with a test/ folder but no report counts as one failure, and
// so does a test file that failed to load, so a run that crashed can never look green.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const dirs = [
  ...readdirSync('packages').map((name) => join('packages', name)),
  'benchmarks',
  'examples',
].filter((dir) => existsSync(join(dir, 'test')));

let passed = 0;
let failed = 0;
for (const dir of dirs) {
  const report = join(dir, '.reports', 'vitest.json');
  if (!existsSync(report)) {
    console.error(`${dir}: no test report (its test run did not finish)`);
    failed += 1;
    continue;
  }
  const json = JSON.parse(readFileSync(report, 'utf8'));
  const loadFailures = (json.testResults ?? []).filter(
    (file) => file.status === 'failed' && (file.assertionResults ?? []).length === 0,
  ).length;
  passed += json.numPassedTests ?? 0;
  failed += (json.numFailedTests ?? 0) + loadFailures;
  console.error(
    `${dir}: ${json.numPassedTests} passed, ${json.numFailedTests} failed, ${loadFailures} files failed to load`,
  );
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed > 0 ? 1 : 0);
