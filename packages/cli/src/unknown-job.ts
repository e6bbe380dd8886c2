import type { FleetView } from '@fleetcron/core';
import { EXIT, type ExitCode } from './exit-codes.js';
import type { CliIo } from './io.js';

/** Levenshtein distance, for "did you mean". */
function distance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      current[j] = Math.min(
        (previous[j] ?? 0) + 1,
        (current[j - 1] ?? 0) + 1,
        (previous[j - 1] ?? 0) + cost,
      );
    }
    previous = current;
  }
  return previous[b.length] ?? 0;
}

/** Prints that `job` is unknown with the nearest name (or the known ones) and returns exit code 4. */
export function unknownJob(job: string, view: FleetView, io: CliIo): ExitCode {
  const names = view.jobs.map((j) => j.name);
  const nearest = names
    .map((name) => ({ name, d: distance(job.toLowerCase(), name.toLowerCase()) }))
    .sort((a, b) => a.d - b.d)[0];
  let hint: string;
  if (names.length === 0)
    hint = 'the fleet has no jobs (no live instance defines one, no job has state)';
  else if (nearest && nearest.d <= Math.max(2, Math.floor(job.length / 3)))
    hint = `did you mean ${JSON.stringify(nearest.name)}?`;
  else hint = `known jobs: ${names.slice(0, 20).join(', ')}${names.length > 20 ? ', ...' : ''}`;
  io.err(`fleetcron: unknown job ${JSON.stringify(job)}; ${hint}`);
  return EXIT.unknownJob;
}
