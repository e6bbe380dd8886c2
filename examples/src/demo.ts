// pnpm demo [--seconds 20] [--backend sqlite|memory|postgres|redis|etcd] [--every 2000] [--file PATH]
// Three scheduler instances with skewed clocks share one backend; each fire runs exactly once.
// Default (sqlite): three real OS processes on one SQLite file, no server (a temporary file, or
// --file PATH, kept afterwards for `fleetcron jobs` with FLEETCRON_URL=sqlite://PATH). Other backends: three
// schedulers inside this process on a shared client (memory needs no server; postgres, redis and
// etcd start a throwaway server from @fleetcron/testkit).
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { realClock } from '@fleetcron/core';
import { openBackend } from './backends.js';
import { type FleetDemoResult, runFleetDemo, summaryLine } from './fleet-demo.js';
import { runProcessFleet } from './process-fleet.js';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '20' },
    backend: { type: 'string', default: 'sqlite' },
    every: { type: 'string', default: '2000' },
    file: { type: 'string' },
  },
});
const seconds = Number(values.seconds);
const everyMs = Number(values.every);
if (!(seconds > 0) || !(everyMs > 0)) {
  console.error('--seconds and --every must be positive numbers');
  process.exitCode = 2;
} else {
  await main();
}

async function main(): Promise<void> {
  if (values.backend === 'sqlite') return mainProcesses();
  let backend: Awaited<ReturnType<typeof openBackend>>;
  try {
    backend = await openBackend(values.backend, { clock: realClock });
  } catch (error) {
    console.error(error instanceof Error ? error.message : error);
    process.exitCode = 2;
    return;
  }
  const interrupt = new AbortController();
  const onSignal = () => interrupt.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    const result = await runFleetDemo({
      backend,
      backendName: values.backend,
      seconds,
      everyMs,
      signal: interrupt.signal,
    });
    report(result);
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await backend.close();
  }
}

/** The default: three OS processes on one SQLite file. */
async function mainProcesses(): Promise<void> {
  const interrupt = new AbortController();
  const onSignal = () => interrupt.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    report(
      await runProcessFleet({
        seconds,
        everyMs,
        signal: interrupt.signal,
        ...(values.file === undefined
          ? {}
          : { file: resolve(process.env.INIT_CWD ?? process.cwd(), values.file) }),
      }),
    );
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}

/** Prints the summary line; a duplicate or a missed fire fails the command. */
function report(result: FleetDemoResult): void {
  console.log(summaryLine(result));
  if (result.duplicates > 0 || result.missed > 0) process.exitCode = 1;
}
