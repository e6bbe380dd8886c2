import type { Lock } from '@fleetcron/core';
import { cellJobs, jobFireAt, type ScaleCell, scaleJobName } from './cell.js';

/**
 * Checks with `lock.inspect` that each job's fire in `cell` has exactly one `won` claim record,
 * by the instance the ledger says ran it. `ranBy` maps job → instance index (from the ledger);
 * a job whose claims threw (`failedJobs`) and that nobody ran may have no record.
 * Answers `ok` or a short description of the mismatches.
 */
export async function verifyCell(
  lock: Lock,
  cell: ScaleCell,
  ranBy: ReadonlyMap<number, number>,
  failedJobs: ReadonlySet<number>,
): Promise<string> {
  const jobs = cellJobs(cell);
  const problems: string[] = [];
  const next = { job: 0 };
  const worker = async () => {
    for (let job = next.job++; job < jobs; job = next.job++) {
      const fireAt = jobFireAt(cell, job);
      const { fires } = await lock.inspect(scaleJobName(cell.prefix, job));
      const records = fires.filter((f) => f.fireAt === fireAt);
      const instance = ranBy.get(job);
      const owner = instance === undefined ? undefined : `scale-i${instance}`;
      if (records.length === 0 && !owner && failedJobs.has(job)) continue;
      if (records.length !== 1) problems.push(`job ${job}: ${records.length} claim records`);
      else if (owner && (records[0]?.owner !== owner || records[0]?.outcome !== 'won')) {
        problems.push(`job ${job}: record of ${records[0]?.owner}, run by ${owner}`);
      }
    }
  };
  await Promise.all(Array.from({ length: 16 }, worker));
  return problems.length === 0
    ? 'ok'
    : `${problems.length} mismatches (${problems.slice(0, 3).join('; ')})`;
}
