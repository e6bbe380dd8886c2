import { parseArgs } from 'node:util';
import { names } from '../options.js';
import { FAILOVER_TOPOLOGIES, type FailoverTopologyName } from './cases.js';

/** Command-line options of `pnpm bench:failover`. */
export interface FailoverOptions {
  topologies: FailoverTopologyName[];
  /** Runs per topology, one after another. */
  runs: number;
  /** Output directory; `null`: benchmarks/results. */
  out: string | null;
  help: boolean;
}

/** Usage text. */
export const FAILOVER_USAGE = `pnpm bench:failover [options]

  The failover case of each HA topology, side by side: 3 real schedulers claim 5 jobs due every
  second while the leader/primary is SIGKILLed (PostgreSQL: the standby promoted; Redis: the
  Sentinels promote the replica); conformance's runFailover/judgeFailover judge the ledger.
  About 25 to 40 s per topology and run. Do not run it beside other heavy work.

  --topologies <list>  comma-separated (default ${FAILOVER_TOPOLOGIES.join(',')})
  --runs <n>           runs per topology, one after another (default 1)
  --out <dir>          where to write failover-<date>.md/.json (default benchmarks/results)
  --help               this text`;

/** Parses `argv` (without node and script); throws an Error naming the bad option. */
export function parseFailoverOptions(argv: readonly string[]): FailoverOptions {
  const { values } = parseArgs({
    args: [...argv],
    strict: true,
    allowPositionals: false,
    options: {
      topologies: { type: 'string' },
      runs: { type: 'string' },
      out: { type: 'string' },
      help: { type: 'boolean', default: false },
    },
  });
  const topologies = names('topologies', 'topology', values.topologies, FAILOVER_TOPOLOGIES);
  const runs = Number(values.runs ?? '1');
  if (!Number.isInteger(runs) || runs < 1) {
    throw new Error(`--runs must be an integer ≥ 1, got ${JSON.stringify(values.runs)}`);
  }
  return {
    topologies: [...new Set(topologies)] as FailoverTopologyName[],
    runs,
    out: values.out ?? null,
    help: values.help === true,
  };
}
