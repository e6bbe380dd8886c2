import { once } from 'node:events';
import { createWriteStream, type WriteStream } from 'node:fs';
import { at, type FleetcronEvent, Scheduler, subscribe } from '@fleetcron/core';
import { cellJobs, jobFireAt, ledgerFile, type ScaleCell, scaleJobName } from './cell.js';
import { modeSetup } from './claim-mode.js';
import type { CountingLock, LockCalls } from './counting-lock.js';

/** One instance of the scale scenario: its global index and its counted lock. */
export interface FleetInstance {
  index: number;
  counted: CountingLock;
}

/** What the instances of one process observed in one cell (runs are in the ledger files). */
export interface FleetResult {
  /** Job indices for which a claim threw (claim.failed): skipped, fail closed. */
  failedJobs: number[];
  won: number;
  lost: number;
  busy: number;
  failed: number;
  /** Claims refused `early` (the instance's fleet clock ran ahead; claimed again later). */
  early: number;
  /** Lock calls per instance during the cell. */
  calls: { index: number; calls: LockCalls }[];
  /** Whether every instance resolved every job's claim before the deadline. */
  complete: boolean;
  /** ms from the last wake until the last claim of this process was answered. */
  settledAfterMs: number;
  /** ms from the first wake until this process's schedulers had started (≤ 0: in time). */
  startedAfterMs: number;
}

/** A line of the ledger: one run, appended by the instance that ran it. */
export interface LedgerLine {
  job: number;
  instance: number;
  pid: number;
  /** Run start − scheduled time (`ctx.startedAt − ctx.fireAt`), ms. */
  latenessMs: number;
}

/**
 * Runs one cell on `instances` (a real {@link Scheduler} each, on its own counted lock): adds
 * every job of the cell (`at()` its wake), starts, appends one ledger line per run to the
 * instance's ledger file, waits until every claim was answered (or the deadline), stops.
 */
export async function runFleet(
  instances: readonly FleetInstance[],
  cell: ScaleCell,
): Promise<FleetResult> {
  const jobs = cellJobs(cell);
  const lastWake = jobFireAt(cell, jobs - 1);
  const result: FleetResult = {
    ...{ failedJobs: [], won: 0, lost: 0, busy: 0, failed: 0, early: 0, calls: [] },
    ...{ complete: false, settledAfterMs: 0, startedAfterMs: 0 },
  };
  const ids = new Set(instances.map(({ index }) => `scale-i${index}`));
  const prefix = `${cell.prefix}-`;
  let pending = jobs * instances.length;
  let settled = () => {};
  const done = new Promise<void>((resolve) => {
    settled = resolve;
  });
  const unsubscribe = subscribe((event: FleetcronEvent) => {
    if (!ids.has(event.instanceId) || !event.job?.startsWith(prefix)) return;
    const type = event.type;
    if (type === 'claim.lost' && event.reason === 'early') {
      result.early++; // claimed again on time: not an answer yet
      return;
    }
    if (type === 'claim.won') result.won++;
    else if (type === 'claim.lost') result.lost++;
    else if (type === 'claim.busy') result.busy++;
    else if (type === 'claim.failed') {
      result.failed++;
      result.failedJobs.push(Number(event.job.slice(prefix.length)));
    } else return;
    if (--pending === 0) {
      result.settledAfterMs = Date.now() - lastWake;
      settled();
    }
  });
  const ledgers: WriteStream[] = [];
  const schedulers = instances.map(({ index, counted }) => {
    counted.reset();
    const ledger = createWriteStream(ledgerFile(cell, index), { flags: 'a' });
    ledgers.push(ledger);
    const { lock, options } = modeSetup(cell.mode, counted.lock);
    const scheduler = new Scheduler({
      lock,
      instanceId: `scale-i${index}`,
      leaseMs: 30_000,
      ...options,
    });
    for (let job = 0; job < jobs; job++) {
      scheduler.add({
        name: scaleJobName(cell.prefix, job),
        trigger: at(jobFireAt(cell, job)),
        run: (ctx) => {
          const line: LedgerLine = {
            job,
            instance: index,
            pid: process.pid,
            latenessMs: ctx.startedAt.getTime() - ctx.fireAt.getTime(),
          };
          ledger.write(`${JSON.stringify(line)}\n`);
        },
      });
    }
    return scheduler;
  });
  try {
    for (const scheduler of schedulers) scheduler.start();
    result.startedAfterMs = Date.now() - cell.fireAt;
    let timer: NodeJS.Timeout | undefined;
    result.complete = await Promise.race([
      done.then(() => true),
      new Promise<boolean>((resolve) => {
        timer = setTimeout(
          () => resolve(false),
          Math.max(0, lastWake + cell.deadlineMs - Date.now()),
        );
      }),
    ]);
    clearTimeout(timer);
    if (!result.complete) result.settledAfterMs = Date.now() - lastWake;
  } finally {
    unsubscribe();
    await Promise.all(schedulers.map((s) => s.stop({ drainMs: 5_000 })));
    await Promise.all(
      ledgers.map((l) => {
        l.end();
        return once(l, 'finish');
      }),
    );
  }
  result.calls = instances.map(({ index, counted }) => ({ index, calls: { ...counted.calls } }));
  return result;
}
