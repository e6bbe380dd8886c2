import type { Logger } from '../../logger.js';
import {
  claimDelayMs,
  type PartPlacement,
  placeParts,
  positionOf,
} from '../../shards/placement.js';
import { CatchUpPass } from '../catch-up/index.js';
import { exclusionOf, jitterOffset, type NormalizedJob } from '../job/index.js';
import type { LeaderGate } from '../leader/index.js';
import type { LifecycleView } from '../lifecycle.js';
import { ClaimsAtFireTime, claimSenderFor, leaseCallsFor } from '../lock-calls/index.js';
import type { ResolvedOptions } from '../options.js';
import type { ClockWatch, QueueEntry, TimerQueue } from '../timing/index.js';
import { isScheduled } from './early-claims.js';
import { FireEvents } from './fire-events.js';
import { FireRun } from './fire-run.js';
import type { FireDeps, FireKind } from './fire-types.js';
import type { HistoryWriter } from './history-writer.js';
import { ManualRuns } from './manual-runs.js';
import { PauseChecks } from './paused-check.js';

/**
 * Told of each fire claimed here (won, or answered busy or paused) once it is done: the
 * scheduler subscribes fleet control's holder-lost check (see {@link FirePath.onClaimedHere}).
 */
export type ClaimedHereListener = (fire: FireRun) => void;

/** What the fire path is built from: parts the scheduler built before it, none of them itself. */
export interface FirePathParts {
  readonly options: ResolvedOptions;
  readonly history: HistoryWriter;
  readonly queue: TimerQueue;
  readonly clockWatch: ClockWatch;
  readonly log: Logger;
  /** The scheduler's lifecycle (claims taken, fires run, the stop signal). */
  readonly life: LifecycleView;
  /** Leader mode: whether plain fires are claimed here now; tracks the fires of a term. */
  readonly gate: LeaderGate;
  /**
   * The live instances as the registry last read them (fleet control's `LiveInstances`): ids of
   * those defining `job`, `null` before the first read. Where the parts of sharded fires go.
   */
  readonly live: {
    liveFor(job: string, fireAt?: number): string[] | null;
    supersededBy(job: string, fireAt: number): { hash: string } | null | undefined;
    inForce(job: string, fireAt: number): boolean;
  };
}

/**
 * The scheduler's one fire path and the fires on it: every fire — scheduled, caught up, manual,
 * holder-lost rerun — starts here as a {@link FireRun} and is tracked until it is done (what
 * `stop()` drains). Holds the catch-up pass at `start()` and the manual fires, which launch
 * through it.
 */
export class FirePath {
  private readonly fires = new Set<FireRun>();
  /** The fires being handled by identity (job, fire time, part): one at a time each. */
  private readonly byIdentity = new Map<string, FireRun>();
  private readonly deps: FireDeps;
  /** The catch-up pass of each job at start(), ahead of the job's regular claims. */
  readonly catchUps: CatchUpPass;
  /** Manual fires (`trigger()`, fleet run requests, holder-lost reruns). */
  readonly manual: ManualRuns;
  private readonly scheduled: ScheduledFireDeps;
  /** The registry's last read: which definition of a job is in force for a fire. */
  private readonly live: FirePathParts['live'];
  private readonly claimedHere: ClaimedHereListener[] = [];

  constructor(parts: FirePathParts) {
    const { lock, store, middleware, logger, instanceId, claimBatchSize } = parts.options;
    const { history, queue, clockWatch, log, life, live } = parts;
    const clock = clockWatch.clock;
    this.live = live;
    const claims = claimSenderFor(lock, parts.options, clock);
    this.deps = {
      ...{ lock, store, history, clock, queue, instanceId, logger, middleware, clockWatch },
      claims,
      pauseChecks: new PauseChecks(store, queue),
      claimsOnFireTime: new ClaimsAtFireTime(claims, clock, queue, life),
      leaseCalls: leaseCallsFor(lock, claimBatchSize, clock),
      life,
    };
    // the fires of one wake are all queued when the wake ends: their batch leaves then, not a
    // macrotask later (after other due timers, I/O callbacks, or other schedulers' wakes);
    // releases queued before it leave first, as they did when both waited for the macrotask
    const { leaseCalls } = this.deps;
    queue.afterEachWake(() => {
      leaseCalls.sendQueued();
      claims.sendQueued();
    });
    const launch = (job: NormalizedJob, fireAt: number, kind: FireKind) =>
      this.launch(job, fireAt, kind);
    this.catchUps = new CatchUpPass({
      ...{ lock, clock, queue, log, launch, life },
      sampled: (sample, job) =>
        clockWatch.sample(sample, () => ({ instanceId, job, fireAt: 0, backend: lock.backend })),
    });
    this.scheduled = {
      ...{ queue, log, gate: parts.gate, instanceId, graceMs: parts.options.leader.shardGraceMs },
      liveFor: (job, fireAt) => live.liveFor(job, fireAt),
      now: () => clock.now(),
      life,
      launch,
    };
    this.manual = new ManualRuns({
      ...{ log, launch },
      now: () => clock.now(),
      sleep: (ms) => queue.sleep(ms).promise,
    });
  }

  /**
   * Starts handling one fire. A manual fire of a sharded job (run now, a holder-lost rerun of
   * the whole fire) is one part covering all the work: `ctx.shard = { index: 0, count: 1 }`.
   */
  launch(job: NormalizedJob, fireAt: number, kind: FireKind = {}): FireRun {
    const whole = job.shards !== null && !kind.shard;
    const shard =
      job.shards === 'each' ? { index: 0, count: 1, each: true as const } : { index: 0, count: 1 };
    const fireKind = whole ? { ...kind, shard } : kind;
    const identity = fireIdentity(job.name, fireAt, fireKind);
    const handling = this.byIdentity.get(identity);
    if (handling !== undefined) {
      // Two paths reached the same fire here (none should: the catch-up pass and the regular
      // schedule split the fires at one moment). A lock answers a re-claim by the holder of a
      // live lease with that same lease (a retry after a lost reply), so a second claim would
      // run the fire twice under one token. The fire is handled once: this launch ends here.
      this.scheduled.log.warn(
        'fleetcron: a fire already handled here was launched again; ignored',
        {
          ...{ job: job.name, fireAt: new Date(fireAt).toISOString() },
          ...(fireKind.shard ? { shard: fireKind.shard.index } : {}),
        },
      );
      kind.onClaimed?.('dropped');
      return handling;
    }
    const fire = new FireRun(this.deps, job, fireAt, fireKind);
    this.fires.add(fire);
    this.byIdentity.set(identity, fire);
    void fire.done.then(({ status }) => {
      this.fires.delete(fire);
      if (this.byIdentity.get(identity) === fire) this.byIdentity.delete(identity);
      if (status === 'lost' || status === 'dropped' || status === 'undecided') return;
      for (const listener of this.claimedHere) listener(fire);
    });
    return fire;
  }

  /**
   * Subscribes `listener` to the fires claimed here (won, or answered busy or paused), told once
   * each is done, with its outcome. Listeners must not throw.
   */
  onClaimedHere(listener: ClaimedHereListener): void {
    this.claimedHere.push(listener);
  }

  /**
   * A regular (scheduled) fire: launched once the job's catch-up pass is done (bounded), per
   * the mode (leader mode: only by the leader) and the job's shards (see `launchScheduled`);
   * not at all when the job's `exclude` calendar excludes it (`fire.excluded`), nor in claims
   * mode when another definition of the job is in force for it (`fire.superseded`: a rolling
   * deploy, see `definitionsInForce`).
   */
  launchScheduled(job: NormalizedJob, fireAt: number): void {
    const { instanceId, clock } = this.deps;
    const excluded = exclusionOf(job, fireAt, this.scheduled.log);
    if (excluded !== null) {
      // not claimed here, nor anywhere: every instance reads the same calendar
      new FireEvents(instanceId, job.name, fireAt, clock).excluded(excluded);
      return;
    }
    if (!this.scheduled.gate.leaderMode && !this.live.inForce(job.name, fireAt)) {
      // the instances on the definition in force claim it; leader mode runs the leader's own
      const inForce = this.live.supersededBy(job.name, fireAt)?.hash ?? null;
      new FireEvents(instanceId, job.name, fireAt, clock).superseded(inForce);
      return;
    }
    this.catchUps.held.afterCatchUp(job, fireAt, () =>
      launchScheduled(this.scheduled, job, fireAt),
    );
  }

  /**
   * `remove()`: drops the fires of `job` launched ahead of their time whose claim did not leave
   * yet (it waits for the fire time): a job removed before its fire time does not run it.
   */
  dropPrepared(job: string): void {
    const now = this.deps.clock.now();
    for (const fire of this.fires) {
      if (fire.job.name !== job || !isScheduled(fire.kind)) continue;
      if (fire.fireAt + jitterOffset(fire.job, fire.fireAt) <= now) continue; // its claim left
      fire.abort(new Error(`job ${job} was removed before its fire time`));
      // the job may be added again at once: its fire is then a new one
      const identity = fireIdentity(job, fire.fireAt, fire.kind);
      if (this.byIdentity.get(identity) === fire) this.byIdentity.delete(identity);
    }
  }

  /** The fires being handled. */
  active(): FireRun[] {
    return [...this.fires];
  }

  /** Fire times of `job` being handled here. */
  activeFireTimes(job: string): number[] {
    return this.active()
      .filter((f) => f.job.name === job)
      .map((f) => f.fireAt);
  }

  /** How many fires of each job are being handled. */
  activeCounts(): Map<string, number> {
    const active = new Map<string, number>();
    for (const { job } of this.fires) active.set(job.name, (active.get(job.name) ?? 0) + 1);
    return active;
  }
}

/** A fire's identity on this instance: its job, fire time and part (a sharded fire's key). */
function fireIdentity(job: string, fireAt: number, kind: FireKind): string {
  const part = kind.shard
    ? `${kind.shard.each ? 'each' : kind.shard.index}/${kind.shard.count}`
    : '';
  return `${job}\u0000${fireAt}\u0000${part}`;
}

/** What starting a scheduled fire needs from the scheduler. */
export interface ScheduledFireDeps {
  readonly queue: TimerQueue;
  readonly instanceId: string;
  readonly log: Logger;
  readonly gate: LeaderGate;
  /** How long non-preferred parts wait, ms (`shardGraceMs`). */
  readonly graceMs: number;
  /**
   * Ids of the live instances defining `job` (the registry, as of the last heartbeat); with
   * `fireAt`, those whose definition is in force for that fire.
   */
  liveFor(job: string, fireAt?: number): string[] | null;
  /** The fleet clock's time, epoch ms. */
  now(): number;
  /** The scheduler's lifecycle: parts still waiting for their grace are dropped at `stop()`. */
  readonly life: LifecycleView;
  /** Starts handling one fire (the fire path). */
  launch(job: NormalizedJob, fireAt: number, kind: FireKind): FireRun;
}

/**
 * Starts a scheduled fire, per the scheduler's mode and the job's `shards`:
 *
 * - plain job: claimed here in claims mode; in leader mode only while this instance leads (the
 *   fire is then tracked: the term's end aborts it);
 * - `shards: 'each'`: claimed here on this instance's own key (`eachKey`), so it runs once on
 *   every live instance;
 * - `shards: n`: see {@link launchParts}.
 */
export function launchScheduled(d: ScheduledFireDeps, job: NormalizedJob, fireAt: number): void {
  if (job.shards === null) {
    if (d.gate.claimsPlainFires()) d.gate.track(d.launch(job, fireAt, {}));
    return;
  }
  if (job.shards === 'each') {
    const { index, count } = positionOf(d.liveFor(job.name, fireAt), d.instanceId);
    d.launch(job, fireAt, { shard: { index, count, each: true } });
    return;
  }
  launchParts(d, job, fireAt, job.shards);
}

/**
 * The parts of one fire of a `shards: n` job on this instance: its preferred parts (see
 * `placeParts`) are claimed at once, every other part after the grace, in its fallback rank,
 * and one grace later still while this instance already holds a part of the fire
 * (`claimDelayMs`). Each part is claimed on its own key through the fire path (batched with
 * the claims due at the same moment), so each part runs exactly once fleet-wide, wherever the
 * claims land.
 */
export function launchParts(
  d: ScheduledFireDeps,
  job: NormalizedJob,
  fireAt: number,
  count: number,
): void {
  const plan = placeParts({
    count,
    liveIds: d.liveFor(job.name, fireAt),
    self: d.instanceId,
    graceMs: d.graceMs,
  });
  let held = 0;
  const now = d.now();
  const pending = new Set<QueueEntry>();
  const stopped = d.life.stopSignal;
  const onStop = () => {
    for (const entry of pending) d.queue.cancel(entry);
    pending.clear();
  };
  stopped.addEventListener('abort', onStop, { once: true });
  const settle = () => {
    if (pending.size === 0) stopped.removeEventListener('abort', onStop);
  };
  const claim = (part: PartPlacement) => {
    if (!d.life.takesClaims()) return;
    d.launch(job, fireAt, {
      shard: { index: part.index, count },
      onClaimed: (status) => {
        if (status === 'won' || status === 'busy') held++;
      },
    });
  };
  const track = (entry: QueueEntry) => pending.add(entry);
  const untrack = (entry: QueueEntry) => {
    pending.delete(entry);
    settle();
  };
  for (const part of plan) {
    if (part.rank === 0) {
      claim(part);
      continue;
    }
    // the grace counts from the fire time when the fire was launched ahead of it (prepared),
    // else from now (a launch delayed, e.g. behind the job's catch-up pass)
    const first = d.queue.after(part.delayMs + Math.max(0, fireAt - now), () => {
      const extra = claimDelayMs(part, held, d.graceMs) - part.delayMs;
      if (extra > 0) {
        const second = d.queue.after(extra, () => {
          claim(part);
          untrack(second);
        });
        track(second);
      } else claim(part);
      untrack(first);
    });
    track(first);
  }
  settle();
}
