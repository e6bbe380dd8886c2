/**
 * `pnpm bench:failover`: the failover case of every HA topology in one run, side by side
 * (issue #31). Writes `failover-<date>.md` and `.json`; exits 1 when a run shows a duplicate
 * where the design closes it, a token-order violation, an unhandled error, claims that never came
 * back, or could not be made.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runFailover } from '@fleetcron/conformance';
import { exitWith } from '../exit-with.js';
import { machineInfo } from '../machine.js';
import { TOPOLOGY_INFO } from './cases.js';
import { FAILOVER_USAGE, parseFailoverOptions } from './options.js';
import { type FailoverRow, failoverLine, failoverViolations, renderFailover } from './report.js';
import { startTopology } from './topologies.js';

const RESULTS = fileURLToPath(new URL('../../results', import.meta.url));

async function main(): Promise<number> {
  let options: ReturnType<typeof parseFailoverOptions>;
  try {
    options = parseFailoverOptions(process.argv.slice(2));
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n\n${FAILOVER_USAGE}\n`);
    return 2;
  }
  if (options.help) {
    process.stdout.write(`${FAILOVER_USAGE}\n`);
    return 0;
  }
  const base = process.env.INIT_CWD ?? process.cwd();
  const outDir = options.out ? resolve(base, options.out) : RESULTS;
  await mkdir(outDir, { recursive: true });
  const started = new Date();
  const machineAtStart = machineInfo(false);
  const rows: FailoverRow[] = [];
  for (const topology of options.topologies) {
    for (let run = 1; run <= options.runs; run++) {
      process.stdout.write(`${topology} run ${run}: ${TOPOLOGY_INFO[topology].label}\n`);
      const began = Date.now();
      const row: FailoverRow = { topology, run, wallMs: 0 };
      try {
        const ha = await startTopology(topology);
        try {
          row.outcome = await runFailover(ha, TOPOLOGY_INFO[topology].run);
        } finally {
          await ha.close();
        }
      } catch (error) {
        row.failure = error instanceof Error ? error.message : String(error);
      }
      row.wallMs = Date.now() - began;
      rows.push(row);
      process.stdout.write(`${failoverLine(row)}\n`);
    }
  }
  const machine = { ...machineInfo(false), loadAverageAtStart: machineAtStart.loadAverage };
  const stamp = started.toISOString().slice(0, 16).replace(':', '').replace('T', '-');
  const heading = `fleetcron failover, ${started.toISOString().slice(0, 16)} UTC (${machine.cpus} CPUs, Node ${process.version}, load average ${machineAtStart.loadAverage.toFixed(1)} at the start, ${machine.loadAverage.toFixed(1)} at the end)`;
  const file = join(outDir, `failover-${stamp}.md`);
  await writeFile(file, `${renderFailover(rows, heading)}\n`);
  await writeFile(
    join(outDir, `failover-${stamp}.json`),
    `${JSON.stringify({ startedAt: started.toISOString(), options, machine, rows }, null, 2)}\n`,
  );
  process.stdout.write(`report: ${relative(base, file)} (+ .json)\n`);
  return rows.every((row) => failoverViolations(row).length === 0) ? 0 : 1;
}

exitWith(main);
