import { once } from 'node:events';
import { createWriteStream, type WriteStream } from 'node:fs';
import {
  at,
  type Elector,
  every,
  type FleetcronEvent,
  Scheduler,
  subscribe,
} from '@fleetcron/core';
import { cellJobs, jobFireAt, ledgerFile, type ScaleCell, scaleJobName } from './cell.js';
import { modeSetup } from './claim-mode.js';
import type { CountingLock, LockCalls } from './counting-lock.js';

/** One instance of the scale scenario: its global index, its counted lock, its elector. */
export interface FleetInstance {
  index: number;
  counted: CountingLock;
  /** For `leader` cells; absent where the backend has no elector. */
  elector?: Elector;
}

/**
 * Period of each instance's own job, ms: its claims keep the scheduler's estimate of the
 * backend's clock fresh, as in a running fleet (a fresh scheduler has none). Anchored half a
 * period off the cell's first wake, so it never falls on a wake (wakes are 200 ms apart).
 */
const WARM_PERIOD_MS = 250;

/** A follower process (leader cells) is done this long after the last wake with no claim of its own. */
const FOLLOWER_SETTLE_MS = 300;

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
  /** Leader cells: ms from the first wake until an instance of this process was elected, if one was. */
  electedAfterMs: number | null;
  /** Leader cells: no instance of this process led or claimed (its `settledAfterMs` says nothing). */
  follower: boolean;
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
    ...{ complete: false, settledAfterMs: 0, startedAfterMs: 0, electedAfterMs: null },
    follower: false,
  };
  // per-fire modes: every instance answers every job; leader: the leader answers each job once
  const leaderCell = cell.mode === 'leader';
  const answeredJobs = new Uint8Array(jobs);
  const ids = new Set(instances.map(({ index }) => `scale-i${index}`));
  const prefix = `${cell.prefix}-`;
  let pending = leaderCell ? jobs : jobs * instances.length;
  let settled = () => {};
  const done = new Promise<void>((resolve) => {
    settled = resolve;
  });
  const finish = () => {
    result.settledAfterMs = Date.now() - lastWake;
    settled();
  };
  const unsubscribe = subscribe((event: FleetcronEvent) => {
    if (!ids.has(event.instanceId)) return;
    if (event.type === 'leader.changed' && event.isLeader && event.election === cell.prefix) {
      result.electedAfterMs ??= Date.now() - cell.fireAt;
    }
    if (!event.job?.startsWith(prefix)) return;
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
    if (leaderCell) {
      const job = Number(event.job.slice(prefix.length));
      if (answeredJobs[job]) return;
      answeredJobs[job] = 1;
    }
    if (--pending === 0) finish();
  });
  const ledgers: WriteStream[] = [];
  const schedulers = instances.map(({ index, counted, elector }) => {
    counted.reset(prefix); // the cell's jobs only, not the instance's own job
    const ledger = createWriteStream(ledgerFile(cell, index), { flags: 'a' });
    ledgers.push(ledger);
    const { lock, options } = modeSetup(cell.mode, counted.lock, {
      elector,
      election: cell.prefix,
    });
    const scheduler = new Scheduler({
      lock,
      instanceId: `scale-i${index}`,
      leaseMs: 30_000,
      ...options,
    });
    scheduler.add({
      name: `${cell.prefix}.own-i${index}`,
      trigger: every(WARM_PERIOD_MS, { anchor: cell.fireAt + WARM_PERIOD_MS / 2 }),
      run: () => {},
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
    // leader cells: a process none of whose instances leads claims nothing; it is done once the
    // last wake is past with no claim of its own (the leader's process answers every job)
    const follower = leaderCell
      ? setInterval(() => {
          const idle = pending === jobs && !schedulers.some((s) => s.isLeader);
          if (idle && Date.now() > lastWake + FOLLOWER_SETTLE_MS) {
            result.follower = true;
            finish();
          }
        }, 100)
      : undefined;
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
    clearInterval(follower);
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
