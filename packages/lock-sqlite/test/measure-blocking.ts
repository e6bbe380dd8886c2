// Measures how long one claim holds the caller's event loop when the driver runs inline
// (a `Database` passed by the user) with 8 processes contending on one file, against the round
// trip through the worker thread (a path). Not a test: run it and copy the figures to the README.
//   npx tsx --conditions=source test/measure-blocking.ts
import { tempFile } from './fixture.js';
import { type Claimer, startClaimer } from './processes.js';

const PROCESSES = 8;
const FIRES = 500;

async function measure(mode: 'inline' | 'worker'): Promise<number[]> {
  const { file, remove } = tempFile();
  const first = Date.now() - 60_000;
  const claimers: Claimer[] = Array.from({ length: PROCESSES }, (_, i) =>
    startClaimer({
      file,
      owner: `p${i}`,
      key: 'k',
      first,
      count: FIRES,
      mode,
      busyTimeoutMs: 5000,
    }),
  );
  await Promise.all(claimers.map((c) => c.exited));
  remove();
  return claimers
    .flatMap((c) => c.lines)
    .flatMap((l) => ('ms' in l ? [l.ms] : []))
    .sort((a, b) => a - b);
}

const at = (xs: number[], q: number) =>
  xs[Math.min(xs.length - 1, Math.floor(q * xs.length))] ?? NaN;
for (const mode of ['inline', 'worker'] as const) {
  const ms = await measure(mode);
  console.log(
    `${mode}: ${ms.length} claims by ${PROCESSES} processes, per claim p50 ${at(ms, 0.5).toFixed(2)} ms, p99 ${at(ms, 0.99).toFixed(2)} ms, max ${ms.at(-1)?.toFixed(2)} ms`,
  );
}
