/**
 * `pnpm bench:restart`: the whole-fleet restart scenario on each backend ({@link runRestart}).
 * Writes `restart-<date>.md` and `.json`; exits 1 when a fire was lost or run twice, or a run
 * could not be made.
 */
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { backendModules } from '../backends/index.js';
import { exitWith } from '../exit-with.js';
import { machineInfo } from '../machine.js';
import { parseRestartOptions, RESTART_USAGE } from './options.js';
import { renderRestart, restartSummary } from './report.js';
import { RESTART_INSTANCES, type RestartRow, runRestart } from './run.js';

const RESULTS = fileURLToPath(new URL('../../results', import.meta.url));

async function main(): Promise<number> {
  let options: ReturnType<typeof parseRestartOptions>;
  try {
    options = parseRestartOptions(process.argv.slice(2));
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n\n${RESTART_USAGE}\n`);
    return 2;
  }
  if (options.help) {
    process.stdout.write(`${RESTART_USAGE}\n`);
    return 0;
  }
  const base = process.env.INIT_CWD ?? process.cwd();
  const outDir = options.out
    ? resolve(base, options.out)
    : options.quick
      ? await mkdtemp(join(os.tmpdir(), 'fleetcron-bench-restart-'))
      : RESULTS;
  await mkdir(outDir, { recursive: true });
  const started = new Date();
  const rows: RestartRow[] = [];
  for (const name of options.backends) {
    const module = backendModules[name];
    process.stdout.write(`${name}: starting the server\n`);
    const backend = await module.start();
    try {
      process.stdout.write(
        `${name}: ${options.jobs} jobs × ${RESTART_INSTANCES} processes, killed and restarted (about ${(options.missedFires + options.afterFires + 2) * options.periodSeconds} s)\n`,
      );
      const row = await runRestart(backend, {
        ...options,
        tag: `${started.getTime().toString(36)}-${name}`,
      });
      rows.push(row);
      process.stdout.write(`${restartSummary(row)}\n`);
    } finally {
      await backend.close().catch(() => {});
    }
  }
  const machine = machineInfo(false);
  const stamp = started.toISOString().slice(0, 16).replace(':', '').replace('T', '-');
  const heading = `fleetcron restart, ${started.toISOString().slice(0, 16)} (${machine.cpus} CPUs, Node ${process.version}, under tsx)`;
  await writeFile(join(outDir, `restart-${stamp}.md`), `${renderRestart(rows, heading)}\n`);
  await writeFile(
    join(outDir, `restart-${stamp}.json`),
    `${JSON.stringify({ startedAt: started.toISOString(), options, machine, rows }, null, 2)}\n`,
  );
  process.stdout.write(
    `report: ${relative(base, join(outDir, `restart-${stamp}.md`))} (+ .json)\n`,
  );
  return rows.every((r) => !r.failure && r.violations.length === 0) ? 0 : 1;
}

exitWith(main);
