import type { Clock } from '../../clock.js';
import { toError } from '../../errors.js';
import type { ClockSample } from '../../fleet-clock/offset-estimator.js';
import type { Lock } from '../../lock.js';
import type { Logger } from '../../logger.js';
import type { Trigger } from '../../trigger.js';
import type { ClaimOutcome, FireKind, FireRun } from '../fire/index.js';
import { safeCall } from '../fire/index.js';
import { type CatchUpPolicy, includedFires, type NormalizedJob } from '../job/index.js';
import type { LifecycleView } from '../lifecycle.js';
import type { TimerQueue } from '../timing/index.js';
import { settleWithin } from '../timing/index.js';

/** Most missed fires `catchUp: 'skip'` records per job at start. */
export const MAX_RECORDED_MISSED = 100;
/** Most trigger steps walked from the mark to now when looking for missed fires. */
const MAX_STEPS = 10_000;

/** Which missed fires a job claims at start, and how. */
export interface CatchUpPlan {
  /** Missed fires to claim, oldest first (claims move the mark forward, so in this order). */
  fires: number[];
  /** `catchUp.since` of the claims: the oldest fire the policy may catch up. */
  since: number;
  /** `true` under `'skip'`: the fires are claimed only to be recorded `missed`. */
  missed: boolean;
}

/**
 * The fires of `trigger` after `mark` and at or before `now` (the newest `keep` of them), oldest
 * first. A walk is at most {@link MAX_STEPS} fires long; when the span has more, the walk starts
 * again from a later point (halving the span), so the newest fires are found without blocking
 * the event loop on a long outage of a frequent job.
 */
export function missedFires(trigger: Trigger, mark: number, now: number, keep: number): number[] {
  for (let from = mark; ; from = now - Math.floor((now - from) / 2)) {
    const walk = walkFires(trigger, from, now, keep);
    if (walk.complete || now - from < 2) return walk.fires;
  }
}

function walkFires(trigger: Trigger, from: number, now: number, keep: number) {
  const fires: number[] = [];
  for (let step = 0, at = from; step < MAX_STEPS; step++) {
    const next = trigger.next(new Date(at))?.getTime();
    if (next === undefined || next > now || !(next > at)) return { fires, complete: true };
    fires.push(next);
    if (fires.length > keep) fires.shift();
    at = next;
  }
  return { fires, complete: false };
}

/**
 * What to claim for a job whose mark (newest claimed fire, fleet-wide) is `mark`: `'latest'` the
 * newest missed fire; `{ max, within }` the newest `max` missed fires not older than `within`
 * (default: the lock's claim window); `'skip'` the newest {@link MAX_RECORDED_MISSED}, to record.
 */
export function catchUpPlan(
  policy: CatchUpPolicy,
  trigger: Trigger,
  window: { mark: number; now: number; windowMs: number },
): CatchUpPlan {
  const { mark, now, windowMs } = window;
  if (policy === 'latest') {
    const fires = missedFires(trigger, mark, now, 1);
    return { fires, since: fires[0] ?? now, missed: false };
  }
  if (policy === 'skip') {
    const fires = missedFires(trigger, mark, now, MAX_RECORDED_MISSED);
    return { fires, since: fires[0] ?? now, missed: true };
  }
  const since = now - (policy.within ?? windowMs);
  const fires = missedFires(trigger, Math.max(mark, since - 1), now, policy.max);
  return { fires, since, missed: false };
}

/**
 * How long before `start()` a fire must be due to be caught up, ms: max(1 s, the lock's
 * `earlyToleranceMs` + 500 ms). A fire due just before `start()` in a rolling restart is being
 * claimed on time by a live instance: its claim may leave up to `earlyToleranceMs` late by the
 * fleet's clock (a live clock that far behind is still accepted) and takes a round trip to land
 * (a few ms to a few hundred ms under load). A catch-up claim of it would win ahead of that claim
 * and run it as a catch-up. The newest fire of this grace nobody claimed is claimed late as a
 * regular fire instead, see {@link graceFire}.
 */
export function catchUpGraceMs(lock: Lock): number {
  return Math.max(1_000, (lock.capabilities.earlyToleranceMs ?? 0) + 500);
}

/**
 * Whether `job` can have a fire to catch up at `start()` (`startedAt`, on the fleet's clock):
 * the lock keeps a mark, and the trigger fires at all at or before the catch-up bound
 * (`startedAt` less {@link catchUpGraceMs}). Catch-up claims only fires after the mark (an epoch
 * time) and at or before that bound, so a job whose first fire is later (an `at()` still ahead)
 * has nothing to catch up whatever its mark: its pass (a mark read) is skipped and its regular
 * claims are not held. A trigger that throws counts as `true` (the pass reports it).
 */
export function mayHaveMissed(lock: Lock, job: NormalizedJob, startedAt: number): boolean {
  if (lock.capabilities.durableMark === undefined) return false; // no mark: nothing is known
  try {
    const first = job.trigger.next(new Date(0));
    return first !== null && first.getTime() <= startedAt - catchUpGraceMs(lock);
  } catch {
    return true;
  }
}

/**
 * The fire of `job` due in the catch-up grace before `start()` (after `startedAt` less
 * {@link catchUpGraceMs}, at or before `startedAt`) that nobody has claimed yet (after `mark`),
 * or `null`. Neither the catch-up pass (fires at or before the grace) nor the regular schedule
 * (fires after `startedAt`) covers it: a whole fleet back within the grace after a fire would
 * drop it. It counts as the newest missed fire: when older missed fires are owed too, it is the
 * target of the job's one catch-up claim (see {@link planCatchUp}), so the winner's claim moves
 * the mark to it and handles it last, after the older ones, under the same lease (an instance
 * that reads the mark after that claim sees nothing owed, and never claims it against the
 * series' lease, which would answer `busy`). When nothing older is owed, every instance claims
 * it late as a regular fire: one winner. Under `'skip'` it is recorded `skipped` (`missed`);
 * otherwise it runs. The newest such fire only (the late-fire rule), for jobs firing more often
 * than the grace.
 */
export function graceFire(
  lock: Lock,
  job: NormalizedJob,
  startedAt: number,
  mark: number,
): number | null {
  const after = Math.max(mark, startedAt - catchUpGraceMs(lock));
  return missedFires(includedFires(job), after, startedAt, 1)[0] ?? null;
}

/** What catching up needs from its scheduler. */
export interface CatchUpDeps {
  readonly lock: Lock;
  readonly clock: Clock;
  readonly queue: TimerQueue;
  readonly log: Logger;
  /** Starts one fire on the scheduler's fire path. */
  launch(job: NormalizedJob, fireAt: number, kind: FireKind): FireRun;
  /** The scheduler's lifecycle: catching up stops with `stop()` (`takesClaims()` false). */
  readonly life: LifecycleView;
  /**
   * Hands the backend's time carried by a mark read's answer to the fleet's clock (`job`: the
   * first key of the read, for the `clock.offset` event).
   */
  sampled(sample: ClockSample, job: string): void;
}

/**
 * Reads the catch-up mark of `job` with `inspect` (the path of locks without
 * {@link Lock.readMarks}), bounded by the job's lease. `undefined` when it could not be read
 * (logged: that job is not caught up).
 */
export async function readMark(
  d: CatchUpDeps,
  job: NormalizedJob,
): Promise<number | null | undefined> {
  try {
    const noAnswer = () => new Error(`inspect: no answer within ${job.leaseMs} ms`);
    const inspection = await settleWithin(
      safeCall(() => d.lock.inspect(job.name)),
      job.leaseMs,
      noAnswer,
      d.queue,
    );
    return inspection.mark ?? null;
  } catch (error) {
    d.log.warn('fleetcron: could not read the catch-up mark; no catch-up', {
      job: job.name,
      error: toError(error),
    });
    return undefined;
  }
}

/**
 * At `start()`, before the job's first regular claim, once its mark (newest claimed fire,
 * fleet-wide) is read: finds the fires of `job` missed while the whole fleet was down, and
 * decides them with ONE catch-up claim of the newest of them. That claim wins only ahead of the
 * mark and unclaimed, on exactly one instance fleet-wide, and moves the mark past every missed
 * fire; its winner handles all of them, oldest first, one at a time, under that one lease
 * (`FireKind.series`): runs them, or records them `skipped`/`missed` under `'skip'`. No claim per
 * missed fire, so no missed fire can meet the lease of another one's run (`busy`), and no regular
 * claim can move the mark past a missed fire not yet claimed. Resolves once the claim is answered
 * (the runs go on as a fire of the fire path): the job's regular claims are held only until
 * then. `mark` `null`: never claimed, nothing was missed. `grace`: the job's grace fire
 * ({@link graceFire}), the newest missed fire when older ones are owed. Answers how it was decided (see
 * {@link CatchUpDecision}). Rejects only when the trigger throws while the missed fires are
 * walked (the pass reports it).
 */
export async function decideCatchUp(
  d: CatchUpDeps,
  job: NormalizedJob,
  startedAt: number,
  mark: number | null,
  grace: number | null = null,
): Promise<CatchUpDecision> {
  for (let attempt = 0; attempt < MAX_EARLY_REPLANS && d.life.takesClaims(); attempt++) {
    // the fleet's clock is re-read for each plan (a claim's answer corrects it)
    const plan = planCatchUp(d, job, startedAt, mark, grace);
    const newest = plan?.fires.at(-1);
    if (plan === null || newest === undefined) return 'none';
    let fire: FireRun | undefined;
    const answer = await new Promise<ClaimOutcome['status'] | 'dropped'>((decided) => {
      fire = d.launch(job, newest, {
        catchUp: { since: plan.since },
        missed: plan.missed,
        series: plan.fires.slice(0, -1),
        onClaimed: decided,
      });
      void fire.done.then(() => decided('dropped')); // dropped before its claim left
    });
    // `early`: this clock ran ahead of the backend's (a fresh instance that has not learned the
    // fleet's clock yet); the answer corrected it, so plan again
    if (answer !== 'early') return answer === 'won' && fire ? fire : 'lost';
  }
  return 'lost';
}

/**
 * The catch-up claim `job` owes at `start()` (`startedAt`) with its mark at `mark`, by the
 * fleet's clock now: `null` or a plan without fires when there is nothing to claim (never
 * claimed; no fire missed before the grace; `'latest'` whose one fire is the grace fire).
 * Fires due after `startedAt` less {@link catchUpGraceMs} are the live fleet's (or this
 * scheduler's own) to claim on time. `grace`: the job's grace fire (see {@link graceFire}), or
 * `null`; it counts as one of the fires the policy picks, the newest: when older missed fires
 * are picked beside it, the plan ends with it (the claim's target, handled last); when none
 * are, the plan has no fires and the grace fire is claimed apart, as a regular fire.
 */
export function planCatchUp(
  d: Pick<CatchUpDeps, 'lock' | 'clock'>,
  job: NormalizedJob,
  startedAt: number,
  mark: number | null,
  grace: number | null,
): CatchUpPlan | null {
  if (mark === null) return null; // never claimed: nothing was missed
  const policy = grace === null ? job.catchUp : withoutNewest(job.catchUp);
  if (policy === null) return null;
  const now = Math.min(startedAt, d.clock.now()) - catchUpGraceMs(d.lock);
  const trigger = includedFires(job); // an excluded fire is not owed
  const plan = catchUpPlan(policy, trigger, { mark, now, windowMs: d.lock.windowMs });
  if (grace === null || plan.fires.length === 0) return plan;
  return { ...plan, fires: [...plan.fires, grace] };
}

/**
 * The policy for the missed fires older than the grace fire, which counts as the newest one:
 * `'latest'` has nothing left (`null`), `{ max: n }` the newest n − 1, `'skip'` records them
 * all still.
 */
function withoutNewest(policy: CatchUpPolicy): CatchUpPolicy | null {
  if (policy === 'skip') return policy;
  if (policy === 'latest' || policy.max <= 1) return null;
  return { ...policy, max: policy.max - 1 };
}

/**
 * How a job's catch-up was decided at `start()`: `'none'`, no catch-up claim (nothing missed
 * before the grace); `'lost'`, this instance's catch-up claim did not win (another instance
 * decides, or the live fleet is past it); or the fire of the won claim, whose `done` resolves
 * once the caught-up fires are handled.
 */
export type CatchUpDecision = 'none' | 'lost' | FireRun;

/**
 * Most times a catch-up pass plans again after its claim was refused `early` (each answer
 * corrects the fleet's clock, so one is usually enough).
 */
const MAX_EARLY_REPLANS = 3;
