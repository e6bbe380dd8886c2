import type { Clock } from '../../clock.js';
import { BackendUnavailableError, SchedulerStoppedError, toError } from '../../errors.js';
import type { ClockSample } from '../../fleet-clock/offset-estimator.js';
import type { CatchUpClaim, ClaimRequest, ClaimResult, Lease, Lock } from '../../lock.js';
import type { Logger } from '../../logger.js';
import type { NormalizedJob } from '../job/index.js';
import { handBackClaim } from '../lease/index.js';
import type { ClaimSender } from '../lock-calls/index.js';
import type { TimerSource } from '../timing/index.js';
import { GiveUp, type GiveUpSignal } from '../timing/index.js';
import type { FireEvents } from './fire-events.js';

/** What claiming a fire needs. */
export interface ClaimContext {
  readonly lock: Lock;
  readonly clock: Clock;
  readonly timers: TimerSource;
  /** How the claim reaches the lock: batched through `claimMany`, or single claims in slots. */
  readonly claims: ClaimSender;
  readonly owner: string;
  readonly events: FireEvents;
  readonly log: Logger;
  /** Aborted when `stop()` stops waiting for this fire: a claim in flight is given up. */
  readonly stopping: GiveUpSignal;
  /**
   * The controller of `stopping`, when a claim may also use it as its give-up signal (aborted
   * when the claim is given up: the fire ends then). Saves one per claim; without it each claim
   * makes its own.
   */
  readonly giveUp?: GiveUp;
  /**
   * False once `stop()` began: a fire still waiting for its batch or a slot is dropped unsent.
   * Called unbound (a plain function property, shared by every fire).
   */
  readonly takesClaims: () => boolean;
  /** Receives the backend's time carried by a claim answer (the fleet clock's samples). */
  sampled(sample: ClockSample): void;
  /** Set for a catch-up claim (wins only ahead of the job's mark; see `ClaimRequest.catchUp`). */
  readonly catchUp?: CatchUpClaim;
  /** Claim a lease of the fire's own even for an exclusive job (a fire that is only recorded). */
  readonly ownLease?: boolean;
  /** The lock key (a sharded fire's part key); default the job's name. */
  readonly key?: string;
  /**
   * When the claim may leave (wall ms on the fleet's clock), when later than the fire time: a
   * job's jitter. Only the claim sender that parks claims honours it.
   */
  readonly claimAt?: number | undefined;
}

/** The answer to a claim, as the fire acts on it. */
export type ClaimOutcome =
  /** Won; `sentAt` is the monotonic time the claim was sent (the lease's deadline counts from it). */
  | { status: 'won'; lease: Lease; sentAt: number }
  | { status: 'lost' }
  /**
   * Refused `early`: the fire is ahead of the backend's clock by more than the lock's tolerance.
   * Nothing was recorded; claim it again once the fleet's clock reaches it.
   */
  | { status: 'early' }
  | { status: 'busy' }
  /** The lock threw or gave no answer in time: skip the fire (fail closed). */
  | { status: 'failed'; error: Error }
  /** Not sent (`stop()` began while the fire waited for its batch or a slot), or given up by `stop()`. */
  | { status: 'dropped' };

/**
 * Claims one fire: hands the claim to the {@link ClaimSender} (the next batch of `claimMany`, or
 * a free slot for a single claim), then waits for its answer, giving up when none comes within
 * the job's lease from the moment it was sent (or `stop()` stops waiting). Giving up aborts the
 * claim's signal (the adapter must not send or re-send it any more; a batch not sent yet drops
 * it) and, should the claim still be won later, hands that win back so the fire is not burnt.
 * Publishes the `claim.*` event. The answer is handled the same however it was sent.
 */
export async function claimFire(
  c: ClaimContext,
  job: NormalizedJob,
  fireAt: number,
): Promise<ClaimOutcome> {
  const giveUp = c.giveUp ?? new GiveUp();
  // the sender also drops the claim when `giveUp` aborted; with its own `giveUp` (none given),
  // `stopping` is read too
  const wanted = c.giveUp === c.stopping ? c.takesClaims : () => wantedUnless(c);
  const sent = await c.claims.send(requestOf(c, job, fireAt), giveUp, wanted, c.claimAt);
  if (sent === null) return { status: 'dropped' };
  const { sentAt, answer: claim } = sent;
  try {
    const result = await answerWithin(claim, job.leaseMs, c.stopping, c.timers);
    if (result === STOPPED) {
      abandon(c, job, giveUp, claim, new SchedulerStoppedError('keep waiting for a claim answer'));
      return { status: 'dropped' };
    }
    if (result === NO_ANSWER) throw abandon(c, job, giveUp, claim, noAnswer(c.lock, job.leaseMs));
    const reply = checked(c.lock, result);
    const receivedAt = c.clock.monotonic();
    if (typeof reply.backendTime === 'number') {
      c.sampled({ sentMono: sentAt, receivedMono: receivedAt, backendTime: reply.backendTime });
    }
    return answered(c, reply, receivedAt - sentAt, sentAt);
  } catch (thrown) {
    const error = toError(thrown);
    c.events.claimFailed(c.lock.backend, error, c.clock.monotonic() - sentAt);
    c.log.warn('fleetcron: claim failed, fire skipped (fail closed)', { error });
    return { status: 'failed', error };
  }
}

/** Whether a claim is still wanted: the scheduler takes claims and `stop()` did not give up on it. */
function wantedUnless(c: ClaimContext): boolean {
  return c.takesClaims() && !c.stopping.aborted;
}

/**
 * Gives up on a sent claim (once per claim: each path returns after it): aborts `giveUp` (the
 * adapter must not send or re-send it) and hands a late win back. Returns `error`.
 */
function abandon(
  c: ClaimContext,
  job: NormalizedJob,
  giveUp: GiveUp,
  claim: Promise<ClaimResult>,
  error: Error,
): Error {
  giveUp.abort(error);
  handBackLateWin(c, job, claim);
  return error;
}

const STOPPED = Symbol('stopped');
const NO_ANSWER = Symbol('no answer');

/**
 * Waits for `claim`'s answer at most `ms` (on `timers`) and while `stopping` is not aborted:
 * the answer (rejects when the lock failed), {@link NO_ANSWER} or {@link STOPPED}. One promise,
 * one timer entry and one listener (removed once settled) per claim: thousands of claims wait
 * at once on a busy wake.
 */
function answerWithin(
  claim: Promise<ClaimResult>,
  ms: number,
  stopping: GiveUpSignal,
  timers: TimerSource,
): Promise<ClaimResult | typeof STOPPED | typeof NO_ANSWER> {
  return new Promise((resolve, reject) => {
    if (stopping.aborted) {
      resolve(STOPPED);
      return;
    }
    const onStop = () => {
      timers.clearTimer(handle);
      resolve(STOPPED);
    };
    const handle = timers.setTimer(() => {
      stopping.removeEventListener('abort', onStop);
      resolve(NO_ANSWER);
    }, ms);
    stopping.addEventListener('abort', onStop);
    claim.then(
      (answer) => {
        timers.clearTimer(handle);
        stopping.removeEventListener('abort', onStop);
        resolve(answer);
      },
      (error: unknown) => {
        timers.clearTimer(handle);
        stopping.removeEventListener('abort', onStop);
        reject(error);
      },
    );
  });
}

/**
 * The claim request of fire `fireAt` of `job`, without its `signal`: the {@link ClaimSender}
 * adds it to a single claim (a batch's requests carry none, see `BatchOptions.signal`).
 */
function requestOf(c: ClaimContext, job: NormalizedJob, fireAt: number): ClaimRequest {
  const exclusive = job.overlap === 'skip' && !c.ownLease;
  const key = c.key ?? job.name;
  const { owner, catchUp } = c;
  // plain literals (a spread per claim is slow in V8); `catchUp` only when set
  if (!catchUp) return { key, fireAt, owner, leaseMs: job.leaseMs, exclusive };
  return { key, fireAt, owner, leaseMs: job.leaseMs, exclusive, catchUp };
}

function noAnswer(lock: Lock, ms: number): BackendUnavailableError {
  return BackendUnavailableError.because(lock.backend, 'claim', `no answer within ${ms} ms`);
}

/** Guards against a lock that answers something that is not a ClaimResult. */
function checked(lock: Lock, result: ClaimResult): ClaimResult {
  if (!result || typeof result !== 'object' || !('status' in result)) {
    throw new Error(`lock ${lock.backend} answered the claim with ${String(result)}`);
  }
  return result;
}

function answered(
  c: ClaimContext,
  result: ClaimResult,
  latencyMs: number,
  sentAt: number,
): ClaimOutcome {
  const backend = c.lock.backend;
  if (result.status === 'lost') {
    c.events.claimLost(backend, result.reason, latencyMs);
    return { status: result.reason === 'early' ? 'early' : 'lost' };
  }
  if (result.status === 'busy') {
    c.events.claimBusy(backend, latencyMs);
    return { status: 'busy' };
  }
  c.events.claimWon(backend, result.lease.token, latencyMs);
  return { status: 'won', lease: result.lease, sentAt };
}

/** A claim given up on may still be won (a client's queue ran it later): hand that win back. */
function handBackLateWin(c: ClaimContext, job: NormalizedJob, claim: Promise<ClaimResult>): void {
  claim.then(
    (late) => {
      if (late?.status !== 'won') return;
      c.log.warn('fleetcron: a claim given up on was won late; handing it back', {
        token: late.lease.token,
      });
      void handBackClaim(
        { lock: c.lock, timers: c.timers, boundMs: job.leaseMs / 3, log: c.log },
        late.lease,
      );
    },
    () => {},
  );
}
