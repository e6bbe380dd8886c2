/**
 * `pnpm bench`: lock contention of fleetcron's backends against raw-client floors and peer
 * libraries, plus scheduler scale. Writes `<date>.md`, `<date>.json` and `<date>.svg`; exits 1
 * when a fire was won twice or by nobody, or a scenario could not run.
 */
import { spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runBench, totalSteps } from './bench.js';
import { exitWith } from './exit-with.js';
import { parseOptions, USAGE } from './options.js';
import { Progress } from './progress.js';
import { type ChartPoint, contentionChartSpec, renderSvg } from './report/chart.js';
import { ratioTable, renderMarkdown } from './report/report.js';
import { scaleChartSpec } from './report/scale.js';

const RESULTS = fileURLToPath(new URL('../results', import.meta.url));

async function main(): Promise<number> {
  let options: ReturnType<typeof parseOptions>;
  try {
    options = parseOptions(process.argv.slice(2), os.cpus().length);
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n\n${USAGE}\n`);
    return 2;
  }
  if (options.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  if (options.pin && process.env.FLEETCRON_BENCH_PINNED !== '1') {
    // Re-run the whole benchmark on CPU 0: workers and servers inherit the affinity.
    const child = spawnSync(
      'taskset',
      ['-c', '0', process.execPath, ...process.execArgv, ...process.argv.slice(1)],
      { stdio: 'inherit', env: { ...process.env, FLEETCRON_BENCH_PINNED: '1' } },
    );
    if (child.error) {
      process.stderr.write(`--pin needs taskset (util-linux): ${child.error.message}\n`);
      return 2;
    }
    return child.status ?? 1;
  }

  const base = process.env.INIT_CWD ?? process.cwd();
  const outDir = options.out
    ? resolve(base, options.out)
    : options.quick
      ? await mkdtemp(join(os.tmpdir(), 'fleetcron-bench-'))
      : RESULTS;
  await mkdir(outDir, { recursive: true });

  const progress = new Progress(totalSteps(options), process.stdout.isTTY === true);
  progress.log(
    `fleetcron bench (${options.quick ? 'quick' : 'full'}): ${options.backends.join(', ')}; instances ${options.instances.join(',')}; ${options.durationSeconds} s per cell in ${options.rounds} round(s); output ${outDir}`,
  );
  const report = await runBench(options, progress);
  progress.stop();

  const stamp = report.startedAt.slice(0, 16).replace(':', '').replace('T', '-');
  const name = options.quick ? `quick-${stamp}` : stamp;
  const points: ChartPoint[] = report.contention
    .filter((c) => !c.failure && Number.isFinite(c.claimsPerSec))
    .map((c) => ({
      backend: c.backend,
      variant: c.variant,
      instances: c.instances,
      claimsPerSec: c.claimsPerSec,
      p50Ms: c.latency.p50,
    }));
  try {
    const svg = await renderSvg(
      contentionChartSpec(points, `fleetcron lock contention, ${report.startedAt.slice(0, 10)}`),
    );
    await writeFile(join(outDir, `${name}.svg`), svg);
    report.chartFile = `${name}.svg`;
  } catch (error) {
    report.failures.push(`chart: ${(error as Error).message}`);
  }
  try {
    const svg = await renderSvg(
      scaleChartSpec(
        report.fleet,
        `fleetcron: jobs due together on 4 instances, ${report.startedAt.slice(0, 10)}`,
      ),
    );
    await writeFile(join(outDir, `${name}-scale.svg`), svg);
    report.scaleChartFile = `${name}-scale.svg`;
  } catch (error) {
    report.failures.push(`scale chart: ${(error as Error).message}`);
  }
  await writeFile(join(outDir, `${name}.json`), `${JSON.stringify(report, null, 2)}\n`);
  await writeFile(join(outDir, `${name}.md`), renderMarkdown(report));

  const shown = relative(base, join(outDir, `${name}.md`));
  process.stdout.write(`\n${ratioTable(report.ratios)}\n\n`);
  process.stdout.write(
    `finished in ${report.totalSeconds.toFixed(0)} s; report: ${shown} (+ .json, .svg, -scale.svg)\n`,
  );
  if (report.failures.length) {
    process.stderr.write(`\nFAILED:\n${report.failures.map((f) => `  - ${f}`).join('\n')}\n`);
    return 1;
  }
  return 0;
}

exitWith(main);
