/**
 * One cell of the scale scenario: which jobs fall due when, and how the schedulers claim them.
 * Plain data, sent to every instance process.
 */

/**
 * How the schedulers claim fires due together: every instance claims every fire, in single
 * claims (`unbatched`) or `claimMany` batches (`batched`); or only the elected leader claims
 * (`leader`, scheduler `mode: 'leader'`, batched where the lock can).
 */
export type ClaimMode = 'unbatched' | 'batched' | 'leader';

/** Every mode, in report order. */
export const CLAIM_MODES: readonly ClaimMode[] = ['unbatched', 'batched', 'leader'];

/** A cell: `jobsPerWake` jobs due at each of `wakes` instants `wakeGapMs` apart from `fireAt`. */
export interface ScaleCell {
  /** Job name prefix, unique per cell and run. */
  prefix: string;
  /** Jobs due at the same instant (one timer wake). */
  jobsPerWake: number;
  /** Wakes, each with its own `jobsPerWake` jobs (several for the single-job reference). */
  wakes: number;
  /** Time between wakes, ms. */
  wakeGapMs: number;
  /** The first wake, epoch ms. */
  fireAt: number;
  mode: ClaimMode;
  /** How long after the last wake an instance waits for every claim to be answered, ms. */
  deadlineMs: number;
  /** Directory of the ledger files (one per instance, append-only, a line per run). */
  ledgerDir: string;
}

/** All jobs of a cell. */
export const cellJobs = (cell: Pick<ScaleCell, 'jobsPerWake' | 'wakes'>): number =>
  cell.jobsPerWake * cell.wakes;

/** Job name of job `job` of a cell. */
export const scaleJobName = (prefix: string, job: number): string => `${prefix}-${job}`;

/** When job `job` of `cell` is due, epoch ms. */
export const jobFireAt = (
  cell: Pick<ScaleCell, 'fireAt' | 'jobsPerWake' | 'wakeGapMs'>,
  job: number,
): number => cell.fireAt + Math.floor(job / cell.jobsPerWake) * cell.wakeGapMs;

/** The ledger file of instance `index` in `cell`. */
export const ledgerFile = (cell: Pick<ScaleCell, 'ledgerDir' | 'prefix'>, index: number): string =>
  `${cell.ledgerDir}/${cell.prefix}-i${index}.ndjson`;
