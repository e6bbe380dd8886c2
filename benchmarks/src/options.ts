import { parseArgs } from 'node:util';
import { BACKENDS, type BackendName } from './backends/types.js';

/** The scenarios of `pnpm bench`, in the order they run. */
export const SCENARIOS = ['scheduler', 'contention', 'scale', 'skew'] as const;
/** One scenario of `pnpm bench` (`--scenarios`). */
export type ScenarioName = (typeof SCENARIOS)[number];

/** One fire of the skew scenario: every clock exact, or the instances skewed. */
export type SkewMode = 'unskewed' | 'skewed';

/** Command-line options of `pnpm bench`. */
export interface BenchOptions {
  backends: BackendName[];
  /** Scenarios to run (default: all of {@link SCENARIOS}). */
  scenarios: ScenarioName[];
  instances: number[];
  /** Measured seconds per contention cell (one backend × variant × instance count). */
  durationSeconds: number;
  /** Interleaved rounds per cell; the cell's duration is split over them. */
  rounds: number;
  /** Worker processes the instances of a cell are spread over. */
  workers: number;
  /** Jobs of the single-instance scheduler scenario. */
  scaleJobs: number;
  /** Jobs due in the same second in the cells of the scale scenario (besides the 1-job reference). */
  fleetJobs: number[];
  /** Wakes of the scale scenario's single-job reference cell (one job due per wake). */
  singleWakes: number;
  /** Seconds of idle CPU measurement. */
  idleSeconds: number;
  /**
   * Fires of the skew scenario per backend: `unskewed` (the baseline, every clock exact) and
   * `skewed`; `--quick` runs `skewed` only, which exercises everything `unskewed` does (two of its
   * four instances run on the exact clock) and judges the same violations.
   */
  skewModes: SkewMode[];
  /**
   * How long after the skew instances are started the fire is due, ms: time for each scheduler
   * to open its lock and estimate the backend's clock (a job every second). `--quick`: 5 s, which
   * leaves the +3 s instance 2 s of its own jobs before the fire.
   */
  skewLeadMs: number;
  pin: boolean;
  quick: boolean;
  /** Output directory; `null`: benchmarks/results for a full run, a temp dir for `--quick`. */
  out: string | null;
  help: boolean;
}

/** Usage text. */
export const USAGE = `pnpm bench [options]

  --backends <list>    backends to measure, comma-separated (default memory,postgres,redis,etcd,sqlite)
  --scenarios <list>   scenarios to run, comma-separated (default scheduler,contention,scale,skew):
                       scheduler = many jobs in one instance, contention = claims against floors
                       and peers, scale = jobs due together on 4 instance processes, skew = clock skew
  --instances <list>   instance counts (default 1,2,4,8,16,32; --quick: 1,2,4)
  --duration <s>       measured seconds per contention cell (default 3; --quick: 0.3)
  --rounds <n>         interleaved rounds per cell, duration split over them (default 3; --quick: 1)
  --workers <n>        worker processes holding the instances (default: CPU count, at least 2)
  --jobs <n>           jobs of the 1-instance scheduler scenario (default 10000; --quick: 1000)
  --fleet-jobs <list>  jobs due in the same second on 4 instance processes, besides the 1-job
                       reference (default 1000,10000; --quick: 200)
  --idle <s>           seconds of idle-CPU measurement (default 3; --quick: 0.5)
  --pin                re-run everything under \`taskset -c 0\` (one core: stabler, lower figures)
  --quick              smoke run of every scenario in well under 90 s (no timing assertions; the
                       skew scenario fires only skewed, 5 s after its instances start)
  --out <dir>          where to write <date>.md/.json/.svg (default benchmarks/results;
                       --quick: a fresh temp dir unless --out is given)
  --help               this text`;

const positive = (name: string, value: string, integer: boolean): number => {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0 || (integer && !Number.isInteger(n))) {
    throw new Error(`--${name} must be a positive ${integer ? 'integer' : 'number'}, got ${value}`);
  }
  return n;
};

/** A comma-separated list of names, each one of `known` (all of them when `text` is absent). */
export function names(
  option: string,
  noun: string,
  text: string | undefined,
  known: readonly string[],
) {
  const given = text ? text.split(',').map((n) => n.trim()) : [...known];
  for (const n of given) {
    if (!known.includes(n)) {
      throw new Error(
        `--${option}: unknown ${noun} ${JSON.stringify(n)} (known: ${known.join(', ')})`,
      );
    }
  }
  return given;
}

/** Parses `argv` (without node and script); throws an Error naming the bad option. */
export function parseOptions(argv: readonly string[], cpus: number): BenchOptions {
  const { values } = parseArgs({
    args: [...argv],
    strict: true,
    allowPositionals: false,
    options: {
      backends: { type: 'string' },
      scenarios: { type: 'string' },
      instances: { type: 'string' },
      duration: { type: 'string' },
      rounds: { type: 'string' },
      workers: { type: 'string' },
      jobs: { type: 'string' },
      'fleet-jobs': { type: 'string' },
      idle: { type: 'string' },
      pin: { type: 'boolean', default: false },
      quick: { type: 'boolean', default: false },
      out: { type: 'string' },
      help: { type: 'boolean', default: false },
    },
  });
  const quick = values.quick === true;
  const backends = names('backends', 'backend', values.backends, BACKENDS);
  const scenarios = names('scenarios', 'scenario', values.scenarios, SCENARIOS);
  const list = (name: string, text: string) =>
    [...new Set(text.split(',').map((n) => positive(name, n.trim(), true)))].sort((a, b) => a - b);
  return {
    backends: [...new Set(backends)] as BackendName[],
    scenarios: SCENARIOS.filter((s) => scenarios.includes(s)),
    instances: list('instances', values.instances ?? (quick ? '1,2,4' : '1,2,4,8,16,32')),
    durationSeconds: positive('duration', values.duration ?? (quick ? '0.3' : '3'), false),
    rounds: positive('rounds', values.rounds ?? (quick ? '1' : '3'), true),
    workers: positive('workers', values.workers ?? String(Math.max(2, cpus)), true),
    scaleJobs: positive('jobs', values.jobs ?? (quick ? '1000' : '10000'), true),
    fleetJobs: list('fleet-jobs', values['fleet-jobs'] ?? (quick ? '200' : '1000,10000')),
    singleWakes: quick ? 2 : 5,
    idleSeconds: positive('idle', values.idle ?? (quick ? '0.5' : '3'), false),
    skewModes: quick ? ['skewed'] : ['unskewed', 'skewed'],
    skewLeadMs: quick ? 5_000 : 8_000,
    pin: values.pin === true,
    quick,
    out: values.out ?? null,
    help: values.help === true,
  };
}
