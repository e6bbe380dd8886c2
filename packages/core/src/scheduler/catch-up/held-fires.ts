import type { FireRun } from '../fire/index.js';
import type { NormalizedJob } from '../job/index.js';
import type { CatchUpDeps } from './catch-up-plan.js';

/** One job whose regular claims are held for its catch-up pass. */
export interface PendingPass {
  readonly job: NormalizedJob;
  /** Its next fire after `start()` (the order of the passes). */
  readonly next: number;
  /**
   * `true` once its decision is under way, by the pass or expedited (see
   * {@link HeldFires.afterCatchUp}): a job is decided once.
   */
  taken: boolean;
  /**
   * How the job's missed fires were decided, once they were: `won`, the fire this instance won
   * (its catch-up decision, or the grace fire claimed late), done once its series is handled;
   * `'elsewhere'`, they may be another instance's (its claim won, or the mark read showed nothing
   * owed); `'none'`, the job was never claimed (no series can hold its lease anywhere).
   */
  decided?: { won: FireRun } | 'elsewhere' | 'none';
}

/**
 * Marks `pass` as being decided; `false` when it already was (by the pass or expedited), in which
 * case the caller leaves it alone.
 */
export function take(pass: PendingPass): boolean {
  if (pass.taken) return false;
  pass.taken = true;
  return true;
}

/** What the hold needs of the scheduler. */
export type HeldFiresDeps = Pick<CatchUpDeps, 'lock' | 'clock' | 'queue' | 'life'>;

/**
 * The hold of regular claims during the catch-up pass at `start()`. A regular claim of a new
 * fire moves the lock's mark past the missed fires, after which their catch-up claims lose
 * (`behind_mark`): with a job firing every second, nothing would be caught up. So each job's
 * regular claims wait until its pass has decided it (its catch-up claim answered: the mark is
 * then past every missed fire), not until the caught-up fires have run. A job still waiting for
 * its turn one lease after its regular fire is expedited (handed to `hurry`: taken out of the
 * pass's order and decided at once), and the regular claim follows that answer: a slow pass
 * delays a held fire by about a lease and a round trip, never drops it, and never lets the
 * regular claim move the mark past missed fires nobody claimed (which would leave them neither
 * run nor recorded).
 */
export class HeldFires {
  /** The jobs whose pass is not done yet, with the promise of its end and what ends it. */
  private readonly pending = new Map<
    string,
    { pass: PendingPass; ended: Promise<void>; end: () => void }
  >();

  /**
   * @param hurry decides `pass` now, out of the pass's order (called once its hold outlived a
   *   lease; the pass then calls {@link release} as for any job).
   */
  constructor(
    private readonly d: HeldFiresDeps,
    private readonly hurry: (pass: PendingPass) => void,
  ) {}

  /** Holds the regular claims of `job` (next fire `next`) until {@link release}. */
  hold(job: NormalizedJob, next: number): PendingPass {
    const pass: PendingPass = { job, next, taken: false };
    let end = () => {};
    const ended = new Promise<void>((done) => {
      end = done;
    });
    this.pending.set(job.name, { pass, ended, end });
    return pass;
  }

  /** Ends the hold of `pass`'s job: its regular claims are held no longer. */
  release(pass: PendingPass): void {
    const pending = this.pending.get(pass.job.name);
    if (pending?.pass !== pass) return;
    this.pending.delete(pass.job.name);
    pending.end();
  }

  /**
   * Calls `launch` (the regular claim of `job`'s fire `fireAt`) once the job's catch-up pass is
   * done, and only while the scheduler runs; at once when no pass is pending. A job still waiting
   * for its turn after its `leaseMs` is expedited (a job whose claim is already under way is
   * waited for; that claim is bounded by its own timeout). A held fire that is already due when
   * the pass ends must not meet the lease of the caught-up fires (it would be answered `busy` and
   * lost, though no catch-up run was going at its fire time): where this instance won them, it
   * is claimed once they are handled; where another instance did, one lease later (that
   * instance claims it first, right after its own series; the late claim is answered `lost`, or
   * runs the fire when that instance died).
   */
  afterCatchUp(job: NormalizedJob, fireAt: number, launch: () => void): void {
    const pending = this.pending.get(job.name);
    if (pending === undefined) {
      launch();
      return;
    }
    const timeout = this.d.queue.sleep(job.leaseMs);
    const late = timeout.promise.then(() => 'late' as const);
    void Promise.race([pending.ended, late]).then(async (won) => {
      timeout.cancel();
      if (won === 'late') {
        if (take(pending.pass)) this.hurry(pending.pass);
        await pending.ended;
      }
      await this.afterCaughtUpFires(pending.pass, fireAt);
      if (this.d.life.takesClaims()) launch();
    });
  }

  /**
   * Resolves when the held fire `fireAt` of `pass`'s job may be claimed: at once when it is not
   * due yet (claimed at its time; a catch-up run still going then meets the overlap rule, as any
   * run) or nothing was caught up; see {@link afterCatchUp}. Bounded by half the lock's claim
   * window after the fire.
   */
  private async afterCaughtUpFires(pass: PendingPass, fireAt: number): Promise<void> {
    const decided = pass.decided;
    const now = this.d.clock.now();
    if (decided === undefined || decided === 'none' || fireAt > now) return;
    // never past half the lock's claim window after the fire: claimed later, it would be stale
    // and dropped unrecorded; claimed then while the caught-up runs go on, it is `busy` and
    // recorded skipped/overlap (the overlap rule)
    const latest = fireAt + this.d.lock.windowMs / 2 - now;
    const wait = this.d.queue.sleep(
      decided === 'elsewhere' ? Math.min(pass.job.leaseMs, latest) : latest,
    );
    if (decided === 'elsewhere') {
      await wait.promise; // the caller checks the lifecycle after
    } else {
      await Promise.race([decided.won.done, wait.promise]);
    }
    wait.cancel();
  }
}
