import { parseArgs } from 'node:util';
import type { CatchUpPolicy } from '@fleetcron/core';
import { BACKENDS, type BackendName } from '../backends/types.js';
import { names } from '../options.js';
import type { RestartSettings } from './run.js';

/** Command-line options of `pnpm bench:restart`: what each run is asked, and where it goes. */
export interface RestartOptions extends Omit<RestartSettings, 'tag'> {
  backends: BackendName[];
  /** Output directory; `null`: benchmarks/results (a temp dir for `--quick`). */
  out: string | null;
  quick: boolean;
  help: boolean;
}

/** Usage text. */
export const RESTART_USAGE = `pnpm bench:restart [options]

  A whole-fleet restart: 4 instance processes × --jobs jobs on a */<period> s cron, killed
  together with SIGKILL, down across --missed fires, started again together; the runs in the
  instances' ledgers judged per fire time.

  --backends <list>   comma-separated (default postgres,redis,etcd,sqlite)
  --jobs <n>          jobs per process, the same in every process (default 10000; --quick: 200)
  --period <s>        cron period in seconds, dividing 60 (default 10)
  --catch-up <p>      skip | latest | max:<n> (default max:3)
  --overlap <p>       skip | allow (default skip)
  --run-ms <n>        how long each run takes, ms (default 200)
  --no-store          lock only: no history store
  --missed <n>        fires the fleet stays down across (default 2)
  --after <n>         fires judged after the restart (default 3)
  --quick             200 jobs (a smoke run of the harness)
  --out <dir>         where to write restart-<date>.md/.json (default benchmarks/results)
  --help              this text`;

const count = (name: string, text: string, min: number): number => {
  const n = Number(text);
  if (!Number.isInteger(n) || n < min) {
    throw new Error(`--${name} must be an integer ≥ ${min}, got ${JSON.stringify(text)}`);
  }
  return n;
};

/** `skip`, `latest` or `max:<n>`. */
function catchUpOf(text: string): CatchUpPolicy {
  if (text === 'skip' || text === 'latest') return text;
  const max = /^max:(\d+)$/.exec(text);
  if (max) return { max: count('catch-up max', max[1] as string, 1) };
  throw new Error(`--catch-up must be skip, latest or max:<n>, got ${JSON.stringify(text)}`);
}

/** Parses `argv` (without node and script); throws an Error naming the bad option. */
export function parseRestartOptions(argv: readonly string[]): RestartOptions {
  const { values } = parseArgs({
    args: [...argv],
    strict: true,
    allowPositionals: false,
    options: {
      backends: { type: 'string' },
      jobs: { type: 'string' },
      period: { type: 'string' },
      'catch-up': { type: 'string' },
      overlap: { type: 'string' },
      'run-ms': { type: 'string' },
      'no-store': { type: 'boolean', default: false },
      missed: { type: 'string' },
      after: { type: 'string' },
      quick: { type: 'boolean', default: false },
      out: { type: 'string' },
      help: { type: 'boolean', default: false },
    },
  });
  const quick = values.quick === true;
  const known = BACKENDS.filter((b) => b !== 'memory');
  const backends = names('backends', 'backend', values.backends, known) as BackendName[];
  const periodSeconds = count('period', values.period ?? '10', 2);
  if (60 % periodSeconds !== 0) {
    throw new Error(
      `--period must divide 60 (a */<period> cron fires evenly), got ${periodSeconds}`,
    );
  }
  const overlap = values.overlap ?? 'skip';
  if (overlap !== 'skip' && overlap !== 'allow') {
    throw new Error(`--overlap must be skip or allow, got ${JSON.stringify(overlap)}`);
  }
  return {
    backends: [...new Set(backends)],
    jobs: count('jobs', values.jobs ?? (quick ? '200' : '10000'), 1),
    periodSeconds,
    catchUp: catchUpOf(values['catch-up'] ?? 'max:3'),
    overlap,
    runMs: count('run-ms', values['run-ms'] ?? '200', 0),
    withStore: values['no-store'] !== true,
    missedFires: count('missed', values.missed ?? '2', 1),
    afterFires: count('after', values.after ?? '3', 1),
    out: values.out ?? null,
    quick,
    help: values.help === true,
  };
}
