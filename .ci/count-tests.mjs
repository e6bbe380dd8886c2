// Sums the vitest JSON reports every package wrote (.reports/vitest.json, and
// .reports/vitest-serial.json where it has test/serial/; Node 20) and the runs on
// the other Node lines (.ci/node-lines.mjs: .reports/node-<version>.json) into one line:
// "N passed, N failed". A package with a test/ folder but no report counts as one failure (so
// does a line's suite without its report), and so does a test file that failed to load, so a run
// that crashed can never look green. Each Node line's own counts are printed before, on stderr.
// The failed tests are named (file > test title, at most MAX_NAMED) just before the last line, so
// the tail of a red run's log says which test failed.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { LINE_SUITES, lineReport, NODE_LINES } from './node-lines.config.mjs';

const dirs = [
  ...readdirSync('packages').map((name) => join('packages', name)),
  'benchmarks',
  'examples',
].filter((dir) => existsSync(join(dir, 'test')));

let passed = 0;
let failed = 0;
/** `file > title` of every failed test, file that did not load, and missing report. */
const failures = [];
/** Failed tests named in the summary; the rest are counted in one line. */
const MAX_NAMED = 40;
/** Why each failed test failed: the first lines of its first failure message, for this many. */
const MAX_EXPLAINED = 5;
/** Lines of one failure message printed. */
const MESSAGE_LINES = 12;
/** `{ name, message }` of failed tests whose report carries a failure message. */
const explained = [];

/** Adds one vitest JSON report to the totals and returns its own counts (a missing one fails). */
function count(label, report) {
  if (!existsSync(report)) {
    console.error(`${label}: no test report (its test run did not finish)`);
    failures.push(`${label}: no test report (its test run did not finish)`);
    failed += 1;
    return { passed: 0, failed: 1 };
  }
  const json = JSON.parse(readFileSync(report, 'utf8'));
  // a file that failed with no failed test: it did not load, or a hook (beforeAll, afterAll)
  // failed and its tests were skipped; each counts as one failure
  const loadFailures = (json.testResults ?? []).filter(failedOutsideTests).length;
  const own = {
    passed: json.numPassedTests ?? 0,
    failed: (json.numFailedTests ?? 0) + loadFailures,
  };
  passed += own.passed;
  failed += own.failed;
  failures.push(...failedTests(label, json));
  console.error(
    `${label}: ${json.numPassedTests} passed, ${json.numFailedTests} failed, ${loadFailures} files failed to load or in a hook`,
  );
  return own;
}

for (const dir of dirs) count(dir, join(dir, '.reports', 'vitest.json'));
// test/serial/: the files `pnpm test:serial` runs alone after the others (their own report)
for (const dir of dirs.filter((d) => existsSync(join(d, 'test', 'serial')))) {
  count(`${dir} (serial)`, join(dir, '.reports', 'vitest-serial.json'));
}
for (const version of NODE_LINES) {
  const line = { passed: 0, failed: 0 };
  for (const suite of LINE_SUITES) {
    const own = count(`Node ${version} ${suite.dir}`, join(suite.dir, lineReport(version)));
    line.passed += own.passed;
    line.failed += own.failed;
  }
  console.error(`Node ${version} (added in below): ${line.passed} passed, ${line.failed} failed`);
}
if (explained.length > 0) {
  // the tail of a red run's log is often all that is kept: say why, not only which
  console.log(
    `why (the first ${Math.min(explained.length, MAX_EXPLAINED)} of ${explained.length}):`,
  );
  for (const { name, message } of explained.slice(0, MAX_EXPLAINED)) {
    console.log(`- ${name}`);
    for (const text of message) console.log(`    ${text}`);
  }
}
if (failures.length > 0) {
  console.log(`failed (${failures.length}):`);
  for (const name of failures.slice(0, MAX_NAMED)) console.log(`  ${name}`);
  if (failures.length > MAX_NAMED) console.log(`  ... and ${failures.length - MAX_NAMED} more`);
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed > 0 ? 1 : 0);

/**
 * The failed tests of one vitest JSON report, as `file > describe > test` (with the Node line
 * when the report is another line's): each failed
 * assertion result, and each file that failed with no failed result (it did not load, or a hook
 * failed; its first message line is added).
 */
function failedTests(label, json) {
  const names = [];
  const line = label.startsWith('Node ') ? ` (${label.split(' ').slice(0, 2).join(' ')})` : '';
  for (const file of json.testResults ?? []) {
    const path = relative(process.cwd(), file.name ?? '');
    const results = file.assertionResults ?? [];
    if (failedOutsideTests(file)) {
      const reason = String(file.message ?? '').split('\n')[0];
      const what = results.length === 0 ? 'did not load' : 'failed in a hook, its tests skipped';
      names.push(`${path} (${what}${reason ? `: ${reason}` : ''})${line}`);
      const message = firstLines(file.message);
      if (message.length > 0) explained.push({ name: `${path} (${what})${line}`, message });
      continue;
    }
    for (const result of results) {
      if (result.status !== 'failed') continue;
      const title = [...(result.ancestorTitles ?? []), result.title].join(' > ');
      names.push(`${path} > ${title}${line}`);
      const message = firstLines(result.failureMessages?.[0]);
      if (message.length > 0) explained.push({ name: `${path} > ${title}${line}`, message });
    }
  }
  return names;
}

/** Whether a test file failed without any failed test: it did not load, or one of its hooks failed. */
function failedOutsideTests(file) {
  const results = file.assertionResults ?? [];
  return file.status === 'failed' && !results.some((result) => result.status === 'failed');
}

/** The first {@link MESSAGE_LINES} lines of a failure message, without colour codes and stack frames. */
function firstLines(message) {
  if (typeof message !== 'string') return [];
  return (
    message
      // biome-ignore lint/suspicious/noControlCharactersInRegex: ANSI colour codes
      .replace(/\u001b\[[0-9;]*m/g, '')
      .split('\n')
      .filter((text) => text.trim() !== '' && !/^\s+at /.test(text))
      .slice(0, MESSAGE_LINES)
  );
}
