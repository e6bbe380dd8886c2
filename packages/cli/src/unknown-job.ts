import type { FleetView } from '@fleetcron/core';
import { EXIT, type ExitCode } from './exit-codes.js';
import type { CliIo } from './io.js';

/** Prints that `job` is unknown, with the nearest known names, and returns exit code 4. */
export function unknownJob(job: string, view: FleetView, io: CliIo): ExitCode {
  const names = view.jobs.map((j) => j.name);
  const near = names.filter(
    (n) =>
      n.toLowerCase().includes(job.toLowerCase()) || job.toLowerCase().includes(n.toLowerCase()),
  );
  const hint =
    names.length === 0
      ? 'the fleet has no jobs (no live instance defines one and the store has no job state)'
      : `known jobs: ${(near.length > 0 ? near : names).slice(0, 10).join(', ')}`;
  io.err(`fleetcron: unknown job ${JSON.stringify(job)}; ${hint}`);
  return EXIT.unknownJob;
}
