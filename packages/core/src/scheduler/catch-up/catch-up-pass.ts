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
import { ClaimRing } from './claim-ring.js';
import { HeldFires, type PendingPass, take } from './held-fires.js';

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
 * (the fires then follow the own clock until the first claim's answer). Above the etcd lock's
 * first measurement of etcd's clock (its `readMarks` waits for it, up to 1.4 s): an instance
 * whose clock is off would otherwise take `start()` on its own clock, and a fire due in the
 * catch-up grace by that clock but still ahead by the fleet's could be handled by nobody.
 */
export const CLOCK_PROBE_MS = 2_000;

/** A job whose catch-up claim is owed, with the mark it was planned from. */
interface Owed {
  readonly pass: PendingPass;
  readonly mark: number;
}

/**
 * Runs the catch-up pass of every job at `start()`; each job's regular claims wait for it in
 * {@link HeldFires} (`held`), which hands a job to {@link CatchUpPass.expedite} when its hold
 * outlives a lease. The jobs whose next fire comes first pass first.
 *
 * Marks are read with `Lock.readMarks` where the lock has it ({@link MARK_READ_CHUNK} jobs per
 * round trip, and read again before each step of claims so that instances starting together
 * do not all claim every job: see `passInSteps`), else with one `inspect` per job,
 * {@link CATCH_UP_CONCURRENCY} at a time. The scheduler learns the fleet's clock before it
 * schedules its first fires from one more read (of one key) at `start()`, see
 * {@link CatchUpPass.begin}.
 */
export class CatchUpPass {
  /** The hold of the jobs' regular claims until each job's pass decided it. */
  readonly held: HeldFires;
  /** When the pass began, on the fleet's clock (the catch-up bound is computed from it). */
  private startedAt = 0;
  /** Jobs expedited since the last flush, read and decided together. */
  private expediting: PendingPass[] = [];

  constructor(private readonly d: CatchUpDeps) {
    this.held = new HeldFires(d, (pass) => this.expedite(pass));
  }

  /**
   * Starts the catch-up pass of `jobs` (fires due up to `start()` less the grace, see
   * `catchUpGraceMs`). Resolves with the moment the pass counts as `start()`, on the fleet's
   * clock, once that clock is learned: a lock with `readMarks` is read for one key first (its
   * answer carries the backend's time), bounded by {@link CLOCK_PROBE_MS}; at once for a lock
   * without it. The scheduler schedules each job's regular fires after that same moment, so every
   * fire is either the pass's (at or before it) or the regular schedule's (after it), never both:
   * judged on an instance's own clock running ahead, the pass would take fires still ahead by the
   * fleet's clock (which the regular schedule also claims) for missed. Never rejects.
   */
  begin(jobs: readonly NormalizedJob[]): Promise<number> {
    const { clock, lock } = this.d;
    const startedMono = clock.monotonic();
    const provisional = clock.now(); // on the own clock until the probe's answer
    this.startedAt = provisional;
    if (lock.readMarks === undefined) {
      this.passWithInspect(this.holdAll(jobs, provisional), provisional);
      return Promise.resolve(provisional);
    }
    // any key's read carries the backend's time: no trigger walked for it
    const probe = jobs[0];
    const probed =
      probe === undefined
        ? Promise.resolve(undefined)
        : this.readMarks([probe.name], CLOCK_PROBE_MS, 'clock');
    return probed.then(() => {
      // `start()` on the clock as now learned (the probe's round trip is not counted); whole
      // ms: it bounds the catch-up claims (`catchUp.since`, an integer epoch ms) and monotonic
      // time has fractions (`performance.now()`)
      const startedAt = Math.floor(clock.now() - (clock.monotonic() - startedMono));
      this.startedAt = startedAt;
      void this.passInSteps(this.holdAll(jobs, startedAt), startedAt);
      return startedAt;
    });
  }

  /**
   * Holds the regular claims of each of `jobs` that may have missed fires at `startedAt` (an
   * `at()` still ahead has nothing to catch up: no mark read, no hold), soonest next fire first.
   */
  private holdAll(jobs: readonly NormalizedJob[], startedAt: number): PendingPass[] {
    const queue: PendingPass[] = [];
    for (const job of jobs) {
      if (!mayHaveMissed(this.d.lock, job, startedAt)) continue;
      queue.push(this.held.hold(job, nextFireAfter(job, startedAt)));
    }
    return queue.sort((a, b) => a.next - b.next); // the soonest regular fires are held the shortest
  }

  /** The pass on a lock without `readMarks`: one `inspect` per job, {@link CATCH_UP_CONCURRENCY} at a time. */
  private passWithInspect(queue: PendingPass[], startedAt: number): void {
    const worker = async () => {
      for (let next = queue.shift(); next; next = queue.shift()) {
        if (!take(next)) continue; // expedited meanwhile
        const mark = this.d.life.takesClaims() ? await readMark(this.d, next.job) : undefined;
        await this.decide(next, startedAt, mark);
      }
    };
    for (let i = 0; i < CATCH_UP_CONCURRENCY; i++) void worker();
  }

  /**
   * Decides `pass` (taken out of the pass's order by the hold) in the next flush: the jobs
   * expedited in the same turn of the event loop are read together ({@link MARK_READ_CHUNK} per
   * call) and claimed at once.
   */
  private expedite(pass: PendingPass): void {
    this.expediting.push(pass);
    if (this.expediting.length > 1) return; // a flush is already queued
    queueMicrotask(() => {
      const passes = this.expediting;
      this.expediting = [];
      void this.decideNow(passes);
    });
  }

  /** Reads the marks of `passes` and decides each (the expedited jobs). Never rejects. */
  private async decideNow(passes: readonly PendingPass[]): Promise<void> {
    const startedAt = this.startedAt;
    if (this.d.lock.readMarks === undefined) {
      await Promise.all(
        passes.map(async (pass) => {
          const mark = this.d.life.takesClaims() ? await readMark(this.d, pass.job) : undefined;
          await this.decide(pass, startedAt, mark);
        }),
      );
      return;
    }
    await Promise.all(
      inChunks(passes).map(async (chunk) => {
        const marks = await this.readChunk(chunk);
        await Promise.all(chunk.map((pass, i) => this.decide(pass, startedAt, marks?.[i])));
      }),
    );
  }

  /**
   * The pass with `readMarks`. First the marks of `queue`'s jobs are read, {@link MARK_READ_CHUNK}
   * at a time, in order; a job that owes no catch-up claim (never claimed, nothing missed, its
   * mark unreadable) is decided at once. The jobs that owe a claim are then claimed group by
   * group (jobs with the same next fire, the soonest first), in steps of at most
   * {@link CATCH_UP_STEP} consecutive jobs of a {@link ClaimRing}, each step once the one before
   * is answered and its marks read again just before: a job whose mark moved past every fire it
   * would claim was decided by another instance's catch-up claim meanwhile (this one would lose)
   * and ends as lost, with no claim. The ring has every instance start at a random place of a
   * common order and move to the middle of the widest undecided run when it meets another's arc,
   * so a fleet that starts together splits the jobs between its instances: about one catch-up
   * claim per job, in a few steps per instance. A first read that fails or times out (bounded by
   * the longest lease among its jobs) leaves its jobs uncaught (logged); a re-read that fails
   * leaves them to be claimed as last read. Never rejects.
   */
  private async passInSteps(queue: readonly PendingPass[], startedAt: number): Promise<void> {
    const owed: Owed[] = [];
    for (const chunk of inChunks(queue)) {
      const marks = await this.readChunk(chunk);
      chunk.forEach((pass, i) => {
        const mark = marks?.[i];
        if (pass.taken) return; // expedited while its mark was read
        if (mark == null || !this.owesClaim(pass, startedAt, mark)) {
          take(pass);
          void this.decide(pass, startedAt, mark);
        } else owed.push({ pass, mark });
      });
    }
    for (const group of groupedByNextFire(owed)) await this.claimGroup(group, startedAt);
  }

  /** The steps of claims of one group of owed jobs (same next fire), see {@link passInSteps}. */
  private async claimGroup(group: Owed[], startedAt: number): Promise<void> {
    group.sort((a, b) => (a.pass.job.name < b.pass.job.name ? -1 : 1));
    const ring = new ClaimRing(group, (o) => o.mark, Math.random);
    let readJustNow = true; // the first read, or the whole ring's re-read after a move
    let lostSteps = 0; // steps in a row that lost most of their claims
    let collided = false; // another instance claims alongside: time to move
    while (!ring.done) {
      if (!this.d.life.takesClaims()) {
        for (const { pass } of ring.closeAll()) this.end(pass);
        return;
      }
      let run: { entry: Owed; mark: number }[] = collided ? [] : ring.nextRun(CATCH_UP_STEP);
      if (!readJustNow && run.length > 0) {
        const decided = await this.rereadRun(ring, run, startedAt);
        run = decided === -1 ? run : run.slice(0, decided); // up to another instance's arc
      }
      if (run.length === 0) {
        await this.rereadRing(ring, startedAt);
        ring.moveToWidestGap();
        readJustNow = true;
        collided = false;
        lostSteps = 0;
        continue;
      }
      readJustNow = false;
      const claims = run.map(({ entry, mark }) => {
        ring.close(entry);
        // expedited meanwhile: decided already (counts as not lost to another instance)
        if (!take(entry.pass)) return 'decided' as const;
        return this.decide(entry.pass, startedAt, mark);
      });
      // Two instances that start close together and step in phase each re-read while the
      // other's step is in flight, so neither sees the other's arc and they claim side by side
      // to the end. The claims' answers show it: when most of the catch-up claims of two steps
      // in a row lost, another instance decided those jobs meanwhile, and the one that lost
      // them moves away. (One such step is usually an arc's edge, which the next re-read finds:
      // moving then costs more re-reads than it saves; measured with 4 instances.)
      const lost = (await Promise.all(claims)).filter((d) => d === 'lost').length;
      lostSteps = lost * 2 >= run.length ? lostSteps + 1 : 0;
      collided = lostSteps >= 2;
    }
  }

  /**
   * Reads the marks of `run` (the next step) again: each job now decided by another instance is
   * closed and its hold ended; the others keep the mark read (`run` is updated in place). The
   * index of the first decided job, `-1` when none (or the marks could not be read: the step is
   * claimed as last read).
   */
  private async rereadRun(
    ring: ClaimRing<Owed>,
    run: { entry: Owed; mark: number }[],
    startedAt: number,
  ): Promise<number> {
    const marks = await this.readChunk(run.map(({ entry }) => entry.pass));
    if (marks === undefined) return -1;
    let first = -1;
    run.forEach((step, i) => {
      const mark = marks[i] ?? step.mark; // no mark now (collected backend): as last read
      if (mark === step.mark || this.owesClaim(step.entry.pass, startedAt, mark)) {
        step.mark = mark;
        ring.reread(step.entry, mark);
        return;
      }
      if (first === -1) first = i;
      ring.close(step.entry);
      step.entry.pass.decided ??= 'elsewhere';
      this.end(step.entry.pass);
    });
    return first;
  }

  /**
   * Reads the marks of every job of `ring` not closed yet ({@link MARK_READ_CHUNK} per call, the
   * calls together), closing the ones another instance decided meanwhile. Chunks that cannot be
   * read stay open as last read.
   */
  private async rereadRing(ring: ClaimRing<Owed>, startedAt: number): Promise<void> {
    const chunks = inChunks(ring.openEntries());
    await Promise.all(chunks.map((chunk) => this.rereadRun(ring, chunk, startedAt)));
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
   * hold of its regular claims. Answers `'lost'` when its catch-up claim lost (another instance
   * decided the job), else `'decided'`. Never rejects.
   */
  private async decide(
    pass: PendingPass,
    startedAt: number,
    mark: number | null | undefined,
  ): Promise<'lost' | 'decided'> {
    try {
      if (mark === undefined || !this.d.life.takesClaims()) return 'decided';
      const late = mark === null ? null : graceFire(this.d.lock, pass.job, startedAt, mark);
      const decision = await decideCatchUp(this.d, pass.job, startedAt, mark, late);
      // nothing owed by this read, with a mark: another instance's catch-up claim may have moved
      // it a moment ago, its series still holding the lease; only a job never claimed (no mark)
      // can have no series anywhere
      const nobodys = decision === 'none' && mark === null;
      pass.decided =
        typeof decision !== 'string' ? { won: decision } : nobodys ? 'none' : 'elsewhere';
      if (late !== null && decision === 'none' && this.d.life.takesClaims()) {
        // nothing older owed: the grace fire is claimed late as a regular fire (under 'skip'
        // only to record it missed); when older fires were owed, the catch-up claim was of it.
        // The hold ends once its claim is answered, as after a catch-up claim
        // `startedAt` was read before the fleet's clock was learned: on a clock that runs ahead,
        // the grace fire may not be due yet by the fleet's clock, and is then not missed
        const missed = pass.job.catchUp === 'skip' && late <= this.d.clock.now();
        const status = await new Promise<string>((answered) => {
          const fire = this.d.launch(pass.job, late, { missed, onClaimed: answered });
          pass.decided = { won: fire };
          void fire.done.then(() => answered('dropped'));
        });
        if (status !== 'won') pass.decided = status === 'dropped' ? 'none' : 'elsewhere';
      }
      return decision === 'lost' ? 'lost' : 'decided';
    } catch (error) {
      // a trigger that throws while walking the missed fires: no catch-up for that job
      this.d.log.warn('fleetcron: catch-up failed', { job: pass.job.name, error: toError(error) });
      return 'decided';
    } finally {
      this.end(pass);
    }
  }

  /** Ends the pass of one job: its regular claims are held no longer. */
  private end(pass: PendingPass): void {
    this.held.release(pass);
  }
}

/** `items` cut into pieces of at most {@link MARK_READ_CHUNK} (one `readMarks` call each). */
function inChunks<T>(items: readonly T[]): T[][] {
  const chunks: T[][] = [];
  for (let from = 0; from < items.length; from += MARK_READ_CHUNK) {
    chunks.push(items.slice(from, from + MARK_READ_CHUNK));
  }
  return chunks;
}

/** The job's first fire after `at` (epoch ms), `Infinity` when none or its trigger throws. */
function nextFireAfter(job: NormalizedJob, at: number): number {
  try {
    return job.trigger.next(new Date(at))?.getTime() ?? Number.POSITIVE_INFINITY;
  } catch {
    return Number.POSITIVE_INFINITY;
  }
}

/** `owed` (sorted by next fire) cut into runs of jobs whose next fire is the same. */
function groupedByNextFire(owed: readonly Owed[]): Owed[][] {
  const groups: Owed[][] = [];
  for (const o of owed) {
    const last = groups.at(-1);
    if (last !== undefined && last[0]?.pass.next === o.pass.next) last.push(o);
    else groups.push([o]);
  }
  return groups;
}
