// pnpm demo [--seconds 20] [--backend memory|postgres|redis|etcd] [--every 2000]
// Three scheduler instances with skewed clocks share one backend; each fire runs exactly once.
import { parseArgs } from 'node:util';
import { realClock } from '@fleetcron/core';
import { openBackend } from './backends.js';
import { runFleetDemo, summaryLine } from './fleet-demo.js';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '20' },
    backend: { type: 'string', default: 'memory' },
    every: { type: 'string', default: '2000' },
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
    console.log(summaryLine(result));
    if (result.duplicates > 0 || result.missed > 0) {
      process.exitCode = 1;
    }
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await backend.close();
  }
}
