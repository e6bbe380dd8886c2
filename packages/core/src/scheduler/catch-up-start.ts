import { toError } from '../errors.js';
import { type CatchUpDeps, catchUp, mayHaveMissed } from './catch-up.js';
import type { NormalizedJob } from './job.js';

/**
 * How many jobs catch up at once at `start()`: each reads the lock's mark, then (when it missed
 * fires) sends one catch-up claim through the claim batches.
 */
export const CATCH_UP_CONCURRENCY = 16;

/**
 * Runs the catch-up pass of every job at `start()` and holds each job's regular claims until its
 * pass is done. The order matters: a regular claim of a new fire moves the lock's mark past the
 * missed fires, after which their catch-up claims lose (`behind_mark`) — with a job firing every
 * second, nothing would be caught up. The hold ends when the pass's catch-up claim is answered
 * (the mark is then past every missed fire), not when the caught-up fires have run; it is
 * bounded by the job's lease (a pass that hangs, or waits for its turn behind
 * {@link CATCH_UP_CONCURRENCY} other jobs, never blocks fires for longer); a held fire is claimed
 * late, within the lock's window, never dropped. The jobs whose next fire comes first pass first.
 */
export class CatchUpStart {
  /** The jobs whose pass is not done yet, with its promise. */
  private readonly pending = new Map<string, Promise<void>>();

  constructor(private readonly d: CatchUpDeps) {}

  /**
   * Starts the catch-up pass of `jobs` (fires due up to `start()` less the grace, see
   * `catchUpGraceMs`), {@link CATCH_UP_CONCURRENCY} jobs at a time, so a scheduler with
   * thousands of jobs does not send thousands of `inspect` calls at once. Never rejects.
   */
  begin(jobs: readonly NormalizedJob[]): void {
    const startedAt = this.d.clock.now();
    const queue: Array<{ job: NormalizedJob; next: number; done: () => void }> = [];
    for (const job of jobs) {
      // nothing to catch up (e.g. an `at()` ahead): no mark read, and its fires are not held
      if (!mayHaveMissed(this.d.lock, job, startedAt)) continue;
      const next = nextFireAfter(job, startedAt);
      this.pending.set(job.name, new Promise<void>((done) => queue.push({ job, next, done })));
    }
    queue.sort((a, b) => a.next - b.next); // the soonest regular fires are held the shortest
    const worker = async () => {
      for (let next = queue.shift(); next; next = queue.shift()) {
        try {
          if (this.d.isRunning()) await catchUp(this.d, next.job, startedAt);
        } catch (error) {
          // a trigger that throws while walking the missed fires: no catch-up for that job
          this.d.log.warn('fleetcron: catch-up failed', {
            job: next.job.name,
            error: toError(error),
          });
        } finally {
          this.pending.delete(next.job.name);
          next.done();
        }
      }
    };
    for (let i = 0; i < CATCH_UP_CONCURRENCY; i++) void worker();
  }

  /**
   * Calls `launch` (a regular claim of `job`) once the job's catch-up pass is done, or after the
   * job's `leaseMs` if it is not, and only while the scheduler runs; at once when no pass is
   * pending.
   */
  afterCatchUp(job: NormalizedJob, launch: () => void): void {
    const pass = this.pending.get(job.name);
    if (pass === undefined) {
      launch();
      return;
    }
    const timeout = this.d.queue.sleep(job.leaseMs);
    void Promise.race([pass, timeout.promise]).then(() => {
      timeout.cancel();
      if (this.d.isRunning()) launch();
    });
  }
}

/** The job's first fire after `at` (epoch ms), `Infinity` when none or its trigger throws. */
function nextFireAfter(job: NormalizedJob, at: number): number {
  try {
    return job.trigger.next(new Date(at))?.getTime() ?? Number.POSITIVE_INFINITY;
  } catch {
    return Number.POSITIVE_INFINITY;
  }
}
