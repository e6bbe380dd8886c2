import { toError } from '../errors.js';
import type { MarkReading } from '../lock.js';
import { type CatchUpDeps, decideCatchUp, graceFire, mayHaveMissed, readMark } from './catch-up.js';
import { settleWithin } from './deadline.js';
import type { NormalizedJob } from './job.js';
import { safeCall } from './safe.js';

/**
 * How many jobs catch up at once at `start()` on a lock without `readMarks`: each reads its
 * mark with `inspect`, then (when it missed fires) sends one catch-up claim.
 */
export const CATCH_UP_CONCURRENCY = 16;

/**
 * Most marks read in one `readMarks` call at `start()`. The reads go one after another, the
 * jobs whose next fire comes first in the first read; each read's jobs send their catch-up
 * claims at once (the claim batches carry them), while the next read is on its way.
 */
export const MARK_READ_CHUNK = 1_000;

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
 * round trip), else with one `inspect` per job, {@link CATCH_UP_CONCURRENCY} at a time. The
 * scheduler learns the fleet's clock before it schedules its first fires from one more read (of
 * one key) at `start()`, see {@link CatchUpStart.begin}.
 */
export class CatchUpStart {
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
      void this.passInChunks(queue, startedAt);
      if (probe === undefined) return Promise.resolve();
      return this.readMarks([probe.name], CLOCK_PROBE_MS, 'clock').then(() => undefined);
    }
    const worker = async () => {
      for (let next = queue.shift(); next; next = queue.shift()) {
        const mark = this.d.isRunning() ? await readMark(this.d, next.job) : undefined;
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
      if (this.d.isRunning()) launch();
    });
  }

  /**
   * Reads the marks of `queue`'s jobs {@link MARK_READ_CHUNK} at a time, in order, and starts
   * each job's decision as soon as its mark is known. A read that fails or times out (bounded by
   * the longest lease among its jobs) leaves its jobs uncaught (logged), as a failed `inspect`
   * does. Never rejects.
   */
  private async passInChunks(queue: readonly PendingPass[], startedAt: number): Promise<void> {
    for (let from = 0; from < queue.length; from += MARK_READ_CHUNK) {
      const chunk = queue.slice(from, from + MARK_READ_CHUNK);
      const reading = this.d.isRunning()
        ? await this.readMarks(
            chunk.map((pass) => pass.job.name),
            Math.max(...chunk.map((pass) => pass.job.leaseMs)),
            'catch-up',
          )
        : undefined;
      chunk.forEach((pass, i) => void this.decide(pass, startedAt, reading?.marks[i]));
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
      if (mark === undefined || !this.d.isRunning()) return;
      const late = mark === null ? null : graceFire(this.d.lock, pass.job, startedAt, mark);
      const decision = await decideCatchUp(this.d, pass.job, startedAt, mark, late !== null);
      if (late !== null && decision !== 'lost') {
        // claimed late as a regular fire (under 'skip' only to record it missed), after the
        // caught-up fires this instance handles: their lease never makes it busy
        const kind = pass.job.catchUp === 'skip' ? { missed: true } : {};
        const launch = () => void (this.d.isRunning() && this.d.launch(pass.job, late, kind));
        if (decision === 'none') launch();
        else void decision.done.then(launch);
      }
    } catch (error) {
      // a trigger that throws while walking the missed fires: no catch-up for that job
      this.d.log.warn('fleetcron: catch-up failed', { job: pass.job.name, error: toError(error) });
    } finally {
      this.pending.delete(pass.job.name);
      pass.done();
    }
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
