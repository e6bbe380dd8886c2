import type { Logger } from '../../logger.js';
import { isTakenRunRequest, type RunRequest, type TakenRunRequest } from '../../registry.js';
import type { ShardInfo } from '../../shards/shard-info.js';
import type { RunStatus } from '../../store.js';
import type { Trigger } from '../../trigger.js';
import type { NormalizedJob } from '../job/index.js';
import type { SkipReason } from './fire-events.js';
import type { FireRun } from './fire-run.js';
import type { FireKind, FireRequest } from './fire-types.js';

/** How often a manual fire is claimed again at the next millisecond when its time was taken. */
export const MANUAL_CLAIM_TRIES = 3;

/** First wait before a holder-lost rerun that met a live run (or lost its identity) tries again, ms. */
export const RERUN_RETRY_FIRST_MS = 250;
/** Longest wait between two tries of a holder-lost rerun, ms. */
export const RERUN_RETRY_MAX_MS = 5_000;

/** How a manual fire ended (what `scheduler.trigger()` resolves). */
export interface ManualRunOutcome {
  job: string;
  /** The manual fire's identity: its claimed fire time, epoch ms (never a scheduled fire). */
  fireAt: number;
  /**
   * The recorded status (`succeeded`, `failed`, `timed_out`, `lease_lost`, `aborted`, or
   * `skipped` with `reason`, e.g. `overlap` while a run holds the exclusive lease, `paused`);
   * `lost` when its claim was refused, `dropped` when `stop()` began before it was claimed;
   * `undecided` (fleet run requests only): another take of the request holds it, not run here.
   */
  status: RunStatus | 'lost' | 'dropped' | 'undecided';
  reason: SkipReason | null;
  /** Who asked. */
  requestedBy: string;
}

/**
 * How this instance answers for the run requests it took, from a store that decides them
 * (`decideRunRequest`, `releaseRunRequest`); built by fleet control.
 */
export interface RunRequestTakes {
  /** Decides `request` as the manual fire `fireAt` of this take. Rejects when the store fails. */
  decide(request: TakenRunRequest, fireAt: number): Promise<boolean>;
  /** Gives `request` back so another instance takes it at once. Bounded; never rejects. */
  release(request: TakenRunRequest, why: string): Promise<void>;
}

/** What manual fires need from their scheduler. */
export interface ManualRunDeps {
  readonly log: Logger;
  /** The fleet's clock. */
  now(): number;
  /** Starts handling one fire (the scheduler's one fire path). */
  launch(job: NormalizedJob, fireAt: number, kind: FireKind): FireRun;
  /** Resolves after `ms` on the scheduler's timer (never, once `stop()` cleared it). */
  sleep(ms: number): Promise<void>;
}

/**
 * Manual fires ("run now"). A manual fire is claimed and run through the same fire path as a
 * scheduled one, on the job's own lock key, so it obeys the job's lease and overlap rule (an
 * exclusive job answers `busy` while a run holds its lease). Its identity is its fire time: the
 * time it was asked for, moved on by 1 ms while that is a fire of the job's trigger or not
 * after this instance's previous manual fire, so it never equals a scheduled fire. Should
 * another instance have claimed the same millisecond, the next one is claimed instead
 * ({@link MANUAL_CLAIM_TRIES} times).
 */
export class ManualRuns {
  private last = 0;

  constructor(private readonly deps: ManualRunDeps) {}

  /**
   * Runs `job` now, as a manual fire asked for by `requestedBy` (answering the fleet run request
   * `request`, when given). Never rejects.
   */
  async run(
    job: NormalizedJob,
    requestedBy: string,
    request?: FireRequest,
  ): Promise<ManualRunOutcome> {
    for (let attempt = 1; ; attempt++) {
      const fireAt = this.fireTime(job.trigger, this.deps.now());
      const fire = this.deps.launch(
        job,
        fireAt,
        request ? { requestedBy, request } : { requestedBy },
      );
      const { status, reason } = await fire.done;
      if (status !== 'lost' || attempt >= MANUAL_CLAIM_TRIES) {
        return { job: job.name, fireAt, status, reason, requestedBy };
      }
    }
  }

  /**
   * Runs a lost fire once more (`onHolderLost: 'rerun'`; this instance won its recovery claim, so
   * no other instance reruns it) as a manual-style fire with `ctx.recovery`. A try that meets a
   * live run of the exclusive job (`busy`: recorded `skipped`/`overlap`) or loses its identity
   * race is tried again with backoff ({@link RERUN_RETRY_FIRST_MS} doubling to
   * {@link RERUN_RETRY_MAX_MS}) until it runs, for at most `withinMs` after the first try; a
   * pause (`skipped`/`paused`) or `stop()` ends it. A rerun given up is logged. Never rejects.
   * `shard`: the lost part of a sharded fire (only that part runs again).
   */
  async rerun(
    job: NormalizedJob,
    lostFireAt: number,
    withinMs: number,
    shard: ShardInfo | null = null,
  ): Promise<ManualRunOutcome> {
    const requestedBy = `holder-lost:${new Date(lostFireAt).toISOString()}`;
    const giveUpAt = this.deps.now() + withinMs;
    for (let wait = RERUN_RETRY_FIRST_MS; ; wait = Math.min(2 * wait, RERUN_RETRY_MAX_MS)) {
      const fireAt = this.fireTime(job.trigger, this.deps.now());
      const fire = this.deps.launch(job, fireAt, {
        ...{ recovery: true, requestedBy },
        ...(shard ? { shard } : {}),
      });
      const { status, reason } = await fire.done;
      const outcome = { job: job.name, fireAt, status, reason, requestedBy };
      if (status !== 'lost' && reason !== 'overlap') return outcome;
      if (this.deps.now() + wait > giveUpAt) {
        this.deps.log.warn(
          'fleetcron: a holder-lost rerun found the job busy until its bound; given up',
          {
            ...{ job: job.name, lostFireAt: new Date(lostFireAt).toISOString(), withinMs },
            status,
          },
        );
        return outcome;
      }
      await this.deps.sleep(wait);
    }
  }

  /**
   * Runs a fleet run request taken by this scheduler as a manual fire (`ctx.request`); `job` is
   * `undefined` when it is no longer registered here or the scheduler is stopping. With `takes`
   * (a store that decides requests) the fire decides the request once its claim is answered, and
   * a request this instance does not get to decide (job gone, stopping, the claim's identity
   * taken every try) is given back at once for another instance; without it the request was
   * removed by the take (at most once), and one not run is logged with its id. Never rejects.
   */
  async runRequest(
    request: RunRequest | TakenRunRequest,
    job: NormalizedJob | undefined,
    takes: RunRequestTakes | null,
  ): Promise<void> {
    const taken = takes && isTakenRunRequest(request) ? request : null;
    const decide = taken && takes ? (fireAt: number) => takes.decide(taken, fireAt) : null;
    // a store written before requests carried data answers without it: `null`, as documented
    const fireRequest = {
      id: request.id,
      by: request.requestedBy,
      data: request.data ?? null,
      decide,
    };
    const outcome = job ? await this.run(job, request.requestedBy, fireRequest) : null;
    const status = outcome?.status ?? 'not_registered_or_stopping';
    if (status !== 'lost' && status !== 'dropped' && status !== 'not_registered_or_stopping')
      return;
    const fields = { request: request.id, job: request.job, requestedBy: request.requestedBy };
    if (taken && takes) {
      this.deps.log.info('fleetcron: a fleet run request taken here was given back', {
        ...fields,
        status,
      });
      await takes.release(taken, status);
    } else {
      this.deps.log.warn('fleetcron: a fleet run request taken here was not run', {
        ...fields,
        status,
      });
    }
  }

  /** The identity of a manual fire asked for at `at`. */
  fireTime(trigger: Trigger, at: number): number {
    let t = Math.max(Math.floor(at), this.last + 1);
    for (let i = 0; i < 1_000 && isFireOf(trigger, t); i++) t++;
    this.last = t;
    return t;
  }
}

/** Whether `t` is a fire time of `trigger` (a trigger that throws counts as no). */
function isFireOf(trigger: Trigger, t: number): boolean {
  try {
    return trigger.next(new Date(t - 1))?.getTime() === t;
  } catch {
    return false;
  }
}
