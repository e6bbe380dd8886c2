import { toError } from '../../errors.js';
import type { MarkReading } from '../../lock.js';
import { safeCall } from '../fire/index.js';
import type { NormalizedJob } from '../job/index.js';
import { settleWithin } from '../timing/index.js';
import {
  type CatchUpDeps,
  decideCatchUp,
  graceFire,
  mayHaveMissed,
  planCatchUp,
  readMark,
} from './catch-up-plan.js';

/**
 * How many jobs catch up at once at `start()` on a lock without `readMarks`: each reads its
 * mark with `inspect`, then (when it missed fires) sends one catch-up claim.
 */
export const CATCH_UP_CONCURRENCY = 16;

/**
 * Most marks read in one `readMarks` call at `start()`. The first reads go one after another,
 * the jobs whose next fire comes first in the first read; see {@link CatchUpPass}.
 */
export const MARK_READ_CHUNK = 1_000;

/**
 * Most catch-up claims one step of the pass sends at `start()` (the claim batches carry them);
 * the next step's marks are read again once the step is answered. Instances that start together
 * may claim the same job in steps that overlap in time; smaller steps make that rarer, at one
 * more mark read per step. See {@link CatchUpPass}.
 */
export const CATCH_UP_STEP = 250;

/**
 * Longest wait at `start()` for the answer that gives the scheduler the fleet's clock before it
 * schedules its first fires, ms. A backend down at start delays scheduling this long at most
 * (the fires then follow the own clock until the first claim's answer).
 */
export const CLOCK_PROBE_MS = 1_000;

/** One job waiting for its catch-up pass. */
interface PendingPass {
  readonly job: NormalizedJob;
  /** Its next fire after `start()` (the order of the passes). */
  readonly next: number;
  /** Ends the hold of the job's regular claims. */
  readonly done: () => void;
}

/** A job whose catch-up claim is owed, with the mark it was planned from. */
interface Owed {
  readonly pass: PendingPass;
  readonly mark: number;
}

/**
 * Runs the catch-up pass of every job at `start()` and holds each job's regular claims until its
 * pass is done. The order matters: a regular claim of a new fire moves the lock's mark past the
 * missed fires, after which their catch-up claims lose (`behind_mark`) — with a job firing every
 * second, nothing would be caught up. The hold ends when the pass's catch-up claim is answered
 * (the mark is then past every missed fire), not when the caught-up fires have run; it is
 * bounded by the job's lease (a pass that hangs, or waits for its turn behind other jobs, never
 * blocks fires for longer); a held fire is claimed late, within the lock's window, never
 * dropped. The jobs whose next fire comes first pass first.
 *
 * Marks are read with `Lock.readMarks` where the lock has it ({@link MARK_READ_CHUNK} jobs per
 * round trip, and read again before each step of claims so that instances starting together
 * do not all claim every job: see `passInSteps`), else with one `inspect` per job,
 * {@link CATCH_UP_CONCURRENCY} at a time. The
 * scheduler learns the fleet's clock before it schedules its first fires from one more read (of
 * one key) at `start()`, see {@link CatchUpPass.begin}.
 */
export class CatchUpPass {
  /** The jobs whose pass is not done yet, with its promise. */
  private readonly pending = new Map<string, Promise<void>>();

  constructor(private readonly d: CatchUpDeps) {}

  /**
   * Starts the catch-up pass of `jobs` (fires due up to `start()` less the grace, see
   * `catchUpGraceMs`). Resolves once the fleet's clock is learned: a lock with `readMarks` is
   * read for one key first (its answer carries the backend's time), bounded by
   * {@link CLOCK_PROBE_MS}; at once for a lock without it. Never rejects.
   */
  begin(jobs: readonly NormalizedJob[]): Promise<void> {
    const startedAt = this.d.clock.now();
    const queue: PendingPass[] = [];
    for (const job of jobs) {
      // nothing to catch up (e.g. an `at()` ahead): no mark read, and its fires are not held
      if (!mayHaveMissed(this.d.lock, job, startedAt)) continue;
      const next = nextFireAfter(job, startedAt);
      this.pending.set(job.name, new Promise<void>((done) => queue.push({ job, next, done })));
    }
    queue.sort((a, b) => a.next - b.next); // the soonest regular fires are held the shortest
    if (this.d.lock.readMarks !== undefined) {
      const probe = queue[0]?.job ?? jobs[0];
      void this.passInSteps(queue, startedAt);
      if (probe === undefined) return Promise.resolve();
      return this.readMarks([probe.name], CLOCK_PROBE_MS, 'clock').then(() => undefined);
    }
    const worker = async () => {
      for (let next = queue.shift(); next; next = queue.shift()) {
        const mark = this.d.life.takesClaims() ? await readMark(this.d, next.job) : undefined;
        await this.decide(next, startedAt, mark);
      }
    };
    for (let i = 0; i < CATCH_UP_CONCURRENCY; i++) void worker();
    return Promise.resolve();
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
      if (this.d.life.takesClaims()) launch();
    });
  }

  /**
   * The pass with `readMarks`. First the marks of `queue`'s jobs are read, {@link MARK_READ_CHUNK}
   * at a time, in order; a job that owes no catch-up claim (never claimed, nothing missed, its
   * mark unreadable) is decided at once. The jobs that owe a claim are then claimed in steps of
   * {@link CATCH_UP_STEP}, each step once the one before is answered, in an order of this
   * instance's own (shuffled among jobs whose next fire is the same), and each step's marks are
   * read again just before: a job whose mark moved past every fire it would claim was decided by
   * another instance's catch-up claim meanwhile (this one would lose) and ends as lost, with no
   * claim. So a fleet that starts together sends little more than one catch-up claim per job,
   * not one per job and instance. A first read that fails or times out (bounded by the longest
   * lease among its jobs) leaves its jobs uncaught (logged); a re-read that fails leaves them to
   * be claimed as first planned. Never rejects.
   */
  private async passInSteps(queue: readonly PendingPass[], startedAt: number): Promise<void> {
    const owed: Owed[] = [];
    for (let from = 0; from < queue.length; from += MARK_READ_CHUNK) {
      const chunk = queue.slice(from, from + MARK_READ_CHUNK);
      const marks = await this.readChunk(chunk);
      chunk.forEach((pass, i) => {
        const mark = marks?.[i];
        if (mark == null || !this.owesClaim(pass, startedAt, mark)) {
          void this.decide(pass, startedAt, mark);
        } else owed.push({ pass, mark });
      });
    }
    const order = shuffledWithinFireTimes(owed);
    for (let from = 0; from < order.length; from += CATCH_UP_STEP) {
      const step = order.slice(from, from + CATCH_UP_STEP);
      const reread = from === 0 ? undefined : await this.readChunk(step.map((o) => o.pass));
      const claims = step.map(({ pass, mark: planned }, i) => {
        const mark = reread?.[i] ?? planned; // unread now: claimed as first planned
        if (
          this.d.life.takesClaims() &&
          (mark === planned || this.owesClaim(pass, startedAt, mark))
        ) {
          return this.decide(pass, startedAt, mark);
        }
        this.end(pass); // decided by another instance meanwhile, or stopped
        return undefined;
      });
      await Promise.all(claims);
    }
  }

  /** The marks of `chunk`'s jobs (one `readMarks` call), `undefined` when unread. */
  private async readChunk(chunk: readonly PendingPass[]): Promise<(number | null)[] | undefined> {
    if (!this.d.life.takesClaims()) return undefined;
    const reading = await this.readMarks(
      chunk.map((pass) => pass.job.name),
      Math.max(...chunk.map((pass) => pass.job.leaseMs)),
      'catch-up',
    );
    return reading?.marks;
  }

  /** Whether `pass`'s job owes a catch-up claim with its mark at `mark`. */
  private owesClaim(pass: PendingPass, startedAt: number, mark: number): boolean {
    try {
      const late = graceFire(this.d.lock, pass.job, startedAt, mark);
      const plan = planCatchUp(this.d, pass.job, startedAt, mark, late);
      return plan !== null && plan.fires.length > 0;
    } catch {
      return true; // a trigger that throws: `decide` reports it
    }
  }

  /**
   * One `readMarks` call, bounded by `timeoutMs`, its backend time sampled; `undefined` on
   * failure (logged, as a warning when the marks were read for `'catch-up'`; a failed `'clock'`
   * read only leaves the clock to the first claim's answer).
   */
  private async readMarks(
    keys: string[],
    timeoutMs: number,
    purpose: 'catch-up' | 'clock',
  ): Promise<MarkReading | undefined> {
    const { lock, clock, queue, log } = this.d;
    const sentMono = clock.monotonic();
    try {
      const noAnswer = () => new Error(`readMarks: no answer within ${timeoutMs} ms`);
      const reading = await settleWithin(
        safeCall(async () => (await lock.readMarks?.(keys)) ?? { marks: keys.map(() => null) }),
        timeoutMs,
        noAnswer,
        queue,
      );
      if (typeof reading.backendTime === 'number') {
        const sample = {
          sentMono,
          receivedMono: clock.monotonic(),
          backendTime: reading.backendTime,
        };
        this.d.sampled(sample, keys[0] as string);
      }
      return reading;
    } catch (error) {
      if (purpose === 'clock') return undefined;
      log.warn('fleetcron: could not read the catch-up marks; no catch-up for these jobs', {
        jobs: keys.length,
        first: keys[0],
        error: toError(error),
      });
      return undefined;
    }
  }

  /**
   * Decides the pass of one job from its mark (`undefined`: unknown, no catch-up), then ends the
   * hold of its regular claims. Never rejects.
   */
  private async decide(
    pass: PendingPass,
    startedAt: number,
    mark: number | null | undefined,
  ): Promise<void> {
    try {
      if (mark === undefined || !this.d.life.takesClaims()) return;
      const late = mark === null ? null : graceFire(this.d.lock, pass.job, startedAt, mark);
      const decision = await decideCatchUp(this.d, pass.job, startedAt, mark, late);
      if (late !== null && decision === 'none') {
        // nothing older owed: the grace fire is claimed late as a regular fire (under 'skip'
        // only to record it missed); when older fires were owed, the catch-up claim was of it
        const kind = pass.job.catchUp === 'skip' ? { missed: true } : {};
        if (this.d.life.takesClaims()) this.d.launch(pass.job, late, kind);
      }
    } catch (error) {
      // a trigger that throws while walking the missed fires: no catch-up for that job
      this.d.log.warn('fleetcron: catch-up failed', { job: pass.job.name, error: toError(error) });
    } finally {
      this.end(pass);
    }
  }

  /** Ends the pass of one job: its regular claims are held no longer. */
  private end(pass: PendingPass): void {
    this.pending.delete(pass.job.name);
    pass.done();
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

/**
 * `owed` in a random order among jobs whose next fire is the same (it is sorted by next fire):
 * each instance of a fleet that starts together claims them in another order, so that most
 * jobs are claimed by one of them and read as decided by the others.
 */
function shuffledWithinFireTimes(owed: readonly Owed[]): Owed[] {
  const order = [...owed];
  for (let from = 0; from < order.length; ) {
    let to = from + 1;
    while (to < order.length && order[to]?.pass.next === order[from]?.pass.next) to++;
    for (let i = to - 1; i > from; i--) {
      const j = from + Math.floor(Math.random() * (i - from + 1));
      [order[i], order[j]] = [order[j] as Owed, order[i] as Owed];
    }
    from = to;
  }
  return order;
}
