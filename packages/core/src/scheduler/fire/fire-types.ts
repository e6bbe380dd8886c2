import type { Clock } from '../../clock.js';
import type { CatchUpClaim, Lock } from '../../lock.js';
import type { Logger } from '../../logger.js';
import type { Middleware, RunRequestRef } from '../../middleware.js';
import type { ShardInfo } from '../../shards/shard-info.js';
import type { RunStatus, Store } from '../../store.js';
import type { HeldLease } from '../lease/index.js';
import type { LifecycleView } from '../lifecycle.js';
import type { ClaimSender, LeaseCalls } from '../lock-calls/index.js';
import type { ClockWatch, TimerQueue } from '../timing/index.js';
import type { ClaimOutcome } from './claim.js';
import type { SkipReason } from './fire-events.js';
import type { HistoryWriter } from './history-writer.js';
import type { PauseChecks } from './paused-check.js';

/** What one fire needs from its scheduler. */
export interface FireDeps {
  readonly lock: Lock;
  /** Read for the paused flag; history goes through `history`. */
  readonly store: Store | null;
  /** Reads the paused flag of a won fire (batched per macrotask where the store allows). */
  readonly pauseChecks: PauseChecks;
  readonly history: HistoryWriter;
  /** The fleet's clock (corrected by the backend's time; see `ClockWatch`). */
  readonly clock: Clock;
  readonly queue: TimerQueue;
  /** Takes the backend times of claim and renewal answers. */
  readonly clockWatch: ClockWatch;
  /**
   * The scheduler's lifecycle: a claim won once `runsFires()` is false is handed back, not run;
   * a fire still waiting for its batch or a claim slot once `takesClaims()` is false is dropped
   * unsent; one waiting to claim again after `early` is dropped when `stopSignal` aborts.
   */
  readonly life: LifecycleView;
  readonly instanceId: string;
  readonly logger: Logger;
  readonly middleware: readonly Middleware[];
  /**
   * How claims reach the lock: batched through `claimMany` (fires due together go out
   * together), or single claims bounded by `maxConcurrentClaims`. A fire waits here for its turn.
   */
  readonly claims: ClaimSender;
  /**
   * `claims`, holding each claim until its fire time (`ClaimsAtFireTime`): for scheduled fires,
   * which the job slots launch ahead of their time. Manual fires (a fire time of now, or a
   * millisecond past a scheduled one) use `claims`.
   */
  readonly claimsOnFireTime: ClaimSender;
  /** How renewals and releases reach the lock: batched when the lock has `extendMany`/`releaseMany`. */
  readonly leaseCalls: LeaseCalls;
}

/** What kind of fire this is, beyond a scheduled one. */
export interface FireKind {
  /** A manual fire: who asked (recorded as `requestedBy`). */
  readonly requestedBy?: string | null;
  /** A re-run of a fire whose holder died (`ctx.recovery`). */
  readonly recovery?: boolean;
  /** A catch-up claim: wins only ahead of the job's mark, fires older than `since` are stale. */
  readonly catchUp?: CatchUpClaim;
  /** A missed fire under `catchUp: 'skip'`: claimed only to record it `skipped` (`missed`). */
  readonly missed?: boolean;
  /**
   * A catch-up decision: older missed fires (epoch ms, oldest first) handled under this fire's
   * lease before this fire itself, one at a time, each with its own history row and events.
   * The one catch-up claim of the newest missed fire decides the whole catch-up of the job
   * fleet-wide (see `catchUp()`).
   */
  readonly series?: readonly number[];
  /**
   * A member of a catch-up series: not claimed, run under the lease its decision fire holds
   * (which renews, checks and gives the lease back; the member never does).
   */
  readonly inherit?: HeldLease;
  /** A part of a sharded fire (claimed on its own key, `ctx.shard`, `Execution.shard`). */
  readonly shard?: ShardInfo;
  /**
   * The fleet run request this manual fire answers (`ctx.request`), and, from a store that
   * decides requests, how to decide it once the claim is answered.
   */
  readonly request?: FireRequest;
  /** Told how the claim was answered, right after it was (sharded fires count their parts). */
  readonly onClaimed?: (status: ClaimOutcome['status']) => void;
}

/** A fleet run request as the manual fire that answers it sees it. */
export interface FireRequest extends RunRequestRef {
  /**
   * Tells the store that this fire decides the request (`decideRunRequest`), after the claim is
   * won (before the run) or answered `busy` (before its `skipped` row): `true` when it does,
   * `false` when another take holds or decided it (the fire then neither runs nor records).
   * Rejects when the store fails. `null`: a store that removes requests when taken (at most once).
   */
  readonly decide: ((fireAt: number) => Promise<boolean>) | null;
}

/**
 * Where one fire is on this instance, in order: `claiming` (its claim not answered yet), `held`
 * (won: its lease is kept, the paused check and the `running` row come next), `running` (the
 * middleware chain), `recorded` (its status is written: a run's outcome, or a skip), `released`
 * (its lease given back or handed back, its rows flushed: `FireRun.done` has resolved). A fire not
 * won here goes from `claiming` to `released` with the outcome `lost` or `dropped`.
 */
export type FireState = 'claiming' | 'held' | 'running' | 'recorded' | 'released';

/**
 * How a fire ended on this instance: its recorded status, or why it was not claimed here
 * (`lost`, `dropped`), or `undecided`: a run request's manual fire whose decision the store
 * refused or did not answer (another take holds the request): not run, nothing recorded.
 */
export interface FireOutcome {
  readonly status: RunStatus | 'lost' | 'dropped' | 'undecided';
  /** The skip reason when `status` is `skipped`. */
  readonly reason: SkipReason | null;
}
