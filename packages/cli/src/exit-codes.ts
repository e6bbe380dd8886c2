/**
 * Exit codes of the `fleetcron` command (documented in the README and the usage text):
 * 0 success; 1 invalid input (a bad expression, zone or value: fleetcron's typed error message)
 * or an unexpected error; 2 bad arguments (usage printed); 3 the backend cannot be reached;
 * 4 unknown job, schedule or run request; 5 a stored schedule changed since the version given;
 * `run --wait` only: 6 the run ended but did not succeed (failed, timed_out, lease_lost, aborted),
 * 7 the run was skipped (the job paused, or busy with a run of its own), 8 `--timeout` passed
 * before the run ended (the request stays and may still run).
 */
export const EXIT = {
  ok: 0,
  invalid: 1,
  usage: 2,
  unreachable: 3,
  unknownJob: 4,
  conflict: 5,
  runFailed: 6,
  runSkipped: 7,
  waitTimeout: 8,
} as const;

/** One of {@link EXIT}'s values. */
export type ExitCode = (typeof EXIT)[keyof typeof EXIT];
