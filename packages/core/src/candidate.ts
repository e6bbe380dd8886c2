import { type Clock, realClock, type TimerHandle } from './clock.js';
import {
  assertCampaign,
  type CampaignResult,
  type Elector,
  type LeaderInfo,
  NotLeaderError,
} from './elector.js';
import { InvalidOptionError, toError } from './errors.js';
import { abortMarginMs, settleWithin } from './scheduler/timing/index.js';
import { assertPositiveMs } from './validate.js';

/** Options of {@link Candidate}. */
export interface CandidateOptions {
  /** The backend. */
  elector: Elector;
  /** The election's name (one leader per name). */
  election: string;
  /** This candidate's id, unique among the election's candidates (usually the instance id). */
  id: string;
  /** How long a term lasts without renewal, in ms (at least the elector's `minTtlMs`). */
  ttlMs: number;
  /**
   * How often a follower campaigns again, in ms. Default a third of `ttlMs`. A follower also
   * campaigns right when the leader's term expires by the backend's clock, whichever is sooner.
   */
  campaignIntervalMs?: number;
  /** Where time is read and timers are set. Default: the real clock. */
  clock?: Clock;
}

/** This instance's leadership of one term, while it lasts. */
export interface Leadership {
  readonly election: string;
  /** The term: the fencing token to pass along with every side effect of the leader. */
  readonly term: number;
  /** Aborted (reason {@link NotLeaderError}) before another instance can be elected. */
  readonly signal: AbortSignal;
  /** Milliseconds left before the local deadline (0 once lost). Synchronous. */
  remainingMs(): number;
  /** Throws {@link NotLeaderError} once the term is lost; reads the clock itself. Synchronous. */
  assertValid(): void;
}

/** Why a term ended on this instance. */
export type LeadershipLostReason =
  /** `resign()` was called. */
  | 'resigned'
  /** The local deadline passed (renewals failed, or the process froze). */
  | 'deadline'
  /** The backend answered that the term is no longer live. */
  | 'replaced';

/** What a {@link Candidate} reports to its listeners. */
export type CandidateEvent =
  /** This instance was elected; its signal is live. */
  | { type: 'elected'; leader: LeaderInfo }
  /** This instance's term ended; its signal was aborted first. */
  | { type: 'lost'; term: number; reason: LeadershipLostReason; error: NotLeaderError }
  /** The observed leader changed (another id or term, or none). */
  | { type: 'leader'; leader: LeaderInfo | null }
  /** A backend step failed (the candidate retries; leadership is judged by the deadline). */
  | { type: 'error'; error: Error };

/** The parts of a {@link Candidate} other code relies on (the scheduler, the conformance suite). */
export interface ElectionCandidate {
  /** Starts campaigning. */
  start(): void;
  /** `true` while this instance leads; checks the local deadline synchronously. */
  readonly isLeader: boolean;
  /** The current leadership, or throws {@link NotLeaderError}. Synchronous. */
  assertLeader(): Leadership;
  /** Subscribes to events; returns the unsubscribe function. */
  onChange(listener: (event: CandidateEvent) => void): () => void;
  /** Hands leadership over at once and stops campaigning. Never rejects. */
  resign(): Promise<void>;
}

interface Held {
  info: LeaderInfo;
  /** Monotonic time of the local deadline. */
  deadline: number;
  controller: AbortController;
  view: Leadership;
  renewTimer: TimerHandle | null;
  deadlineTimer: TimerHandle | null;
  renewing: boolean;
  lastFailure: unknown;
}

/**
 * Campaigns for leadership of one election on an {@link Elector} and holds it safely:
 *
 * - a won term gets a local deadline on the MONOTONIC clock: the time the campaign step was SENT
 *   + TTL − `abortMarginMs(ttl)`; each renewal (every third of the TTL) moves it to its own send
 *   time + TTL − margin. The backend received the request after it was sent, so its own expiry
 *   is later: the signal aborts before another instance can be elected;
 * - `isLeader` and `assertLeader()` compare the monotonic clock with the deadline synchronously
 *   (after a freeze they are right before any overdue timer runs);
 * - `resign()` aborts the signal, then ends the term on the backend so another candidate can be
 *   elected at once.
 *
 * Never rejects or throws from its timers: backend failures become `error` events.
 */
export class Candidate implements ElectionCandidate {
  readonly election: string;
  readonly id: string;
  readonly ttlMs: number;
  readonly campaignIntervalMs: number;
  private readonly elector: Elector;
  private readonly clock: Clock;
  private readonly listeners = new Set<(event: CandidateEvent) => void>();
  private running = false;
  private held: Held | null = null;
  private campaignTimer: TimerHandle | null = null;
  private campaigning = false;
  private observed: LeaderInfo | null = null;

  /** Validates the options (typed errors naming the field); starts nothing. */
  constructor(options: CandidateOptions) {
    if (typeof options?.elector?.campaign !== 'function') {
      throw new InvalidOptionError(
        'elector',
        'must be an Elector (an object with campaign, renew, resign and leader), e.g. new MemoryElector().',
      );
    }
    this.elector = options.elector;
    this.election = options.election;
    this.id = options.id;
    this.ttlMs = options.ttlMs;
    assertCampaign(options, this.elector.capabilities, this.elector.backend);
    this.campaignIntervalMs = options.campaignIntervalMs ?? Math.floor(options.ttlMs / 3);
    assertPositiveMs('campaignIntervalMs', this.campaignIntervalMs);
    this.clock = options.clock ?? realClock;
  }

  /** Starts campaigning (a no-op while running). */
  start(): void {
    if (this.running) return;
    this.running = true;
    this.scheduleCampaign(0);
  }

  get isLeader(): boolean {
    return this.current() !== null;
  }

  /** The term this instance leads, or `null`. Checks the deadline like {@link isLeader}. */
  get term(): number | null {
    return this.current()?.info.term ?? null;
  }

  /** The last leader this candidate observed (itself included), without asking the backend. */
  get knownLeader(): LeaderInfo | null {
    return this.current()?.info ?? this.observed;
  }

  assertLeader(): Leadership {
    const held = this.current();
    if (!held) throw new NotLeaderError(this.election, null);
    return held.view;
  }

  /** Asks the backend for the live leader (updates {@link knownLeader}). */
  async leader(): Promise<LeaderInfo | null> {
    const leader = await this.elector.leader(this.election);
    this.observe(leader);
    return leader;
  }

  onChange(listener: (event: CandidateEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async resign(): Promise<void> {
    this.running = false;
    if (this.campaignTimer) this.clock.clearTimer(this.campaignTimer);
    this.campaignTimer = null;
    const held = this.held;
    if (!held) return;
    this.lose(held, 'resigned', null);
    await this.endOnBackend(held.info);
  }

  /** The held term unless its deadline passed (then it is lost now, synchronously). */
  private current(): Held | null {
    const held = this.held;
    if (!held) return null;
    if (this.clock.monotonic() < held.deadline) return held;
    this.lose(held, 'deadline', held.lastFailure);
    return null;
  }

  private scheduleCampaign(inMs: number): void {
    if (!this.running || this.held || this.campaigning) return;
    if (this.campaignTimer) this.clock.clearTimer(this.campaignTimer);
    this.campaignTimer = this.clock.setTimer(
      () => {
        this.campaignTimer = null;
        this.campaign();
      },
      Math.max(0, inMs),
    );
  }

  private campaign(): void {
    if (!this.running || this.held || this.campaigning) return;
    this.campaigning = true;
    const sentAt = this.clock.monotonic();
    const giveUp = new AbortController();
    const request = { election: this.election, id: this.id, ttlMs: this.ttlMs };
    const step = Promise.resolve().then(() =>
      this.elector.campaign({ ...request, signal: giveUp.signal }),
    );
    let gaveUp = false;
    // a late win of a step given up on is resigned, so followers need not wait for its expiry
    step.then(
      (result) => {
        if (gaveUp && result.status === 'elected') void this.endOnBackend(result.leader);
      },
      () => {},
    );
    settleWithin(step, this.ttlMs, () => timedOut('campaign', this.ttlMs), this.clock).then(
      (result) => this.campaigned(result, sentAt),
      (error: unknown) => {
        gaveUp = true;
        giveUp.abort(error);
        this.campaigning = false;
        this.emit({ type: 'error', error: toError(error) });
        this.scheduleCampaign(this.campaignIntervalMs);
      },
    );
  }

  private campaigned(result: CampaignResult, sentAt: number): void {
    this.campaigning = false;
    if (result.status === 'follower') {
      this.observe(result.leader);
      const untilExpiry = result.leader.expiresAt - result.now + 1;
      this.scheduleCampaign(Math.min(this.campaignIntervalMs, untilExpiry));
      return;
    }
    const deadline = sentAt + this.ttlMs - abortMarginMs(this.ttlMs);
    if (!this.running || this.clock.monotonic() >= deadline) {
      // resigned meanwhile, or the answer came too late to be relied on
      void this.endOnBackend(result.leader);
      this.scheduleCampaign(0);
      return;
    }
    const controller = new AbortController();
    const held: Held = {
      info: result.leader,
      deadline,
      controller,
      renewTimer: null,
      deadlineTimer: null,
      renewing: false,
      lastFailure: null,
      view: {
        election: this.election,
        term: result.leader.term,
        signal: controller.signal,
        remainingMs: () => (this.current() === held ? held.deadline - this.clock.monotonic() : 0),
        assertValid: () => {
          if (this.current() !== held) throw abortReason(held);
        },
      },
    };
    this.held = held;
    this.armDeadline(held);
    this.scheduleRenew(held, sentAt + this.ttlMs / 3 - this.clock.monotonic());
    this.emit({ type: 'elected', leader: result.leader });
    this.observe(result.leader);
  }

  private armDeadline(held: Held): void {
    if (held.deadlineTimer) this.clock.clearTimer(held.deadlineTimer);
    held.deadlineTimer = this.clock.setTimer(() => {
      held.deadlineTimer = null;
      this.current(); // loses it once the deadline passed
    }, held.deadline - this.clock.monotonic());
  }

  private scheduleRenew(held: Held, inMs: number): void {
    if (held.renewTimer) this.clock.clearTimer(held.renewTimer);
    held.renewTimer = this.clock.setTimer(
      () => {
        held.renewTimer = null;
        this.renew(held);
      },
      Math.max(0, inMs),
    );
  }

  private renew(held: Held): void {
    if (this.current() !== held || held.renewing) return;
    held.renewing = true;
    const sentAt = this.clock.monotonic();
    const step = Promise.resolve().then(() => this.elector.renew(held.info, this.ttlMs));
    settleWithin(step, this.ttlMs / 3, () => timedOut('renew', this.ttlMs / 3), this.clock).then(
      (renewed) => {
        held.renewing = false;
        if (this.held !== held) return;
        if (renewed === null) {
          this.lose(held, 'replaced', null);
          return;
        }
        held.deadline = Math.max(held.deadline, sentAt + this.ttlMs - abortMarginMs(this.ttlMs));
        held.lastFailure = null;
        if (this.current() !== held) return; // answered after a freeze past the deadline
        held.info = renewed;
        this.armDeadline(held);
        this.scheduleRenew(held, sentAt + this.ttlMs / 3 - this.clock.monotonic());
      },
      (error: unknown) => {
        held.renewing = false;
        if (this.held !== held) return;
        held.lastFailure = error;
        this.emit({ type: 'error', error: toError(error) });
        if (this.current() === held) this.scheduleRenew(held, this.ttlMs / 6);
      },
    );
  }

  /** Ends `held` locally: the signal is aborted FIRST, then listeners hear of it. */
  private lose(held: Held, reason: LeadershipLostReason, cause: unknown): void {
    if (this.held !== held) return;
    this.held = null;
    if (held.renewTimer) this.clock.clearTimer(held.renewTimer);
    if (held.deadlineTimer) this.clock.clearTimer(held.deadlineTimer);
    const error = new NotLeaderError(this.election, held.info.term, cause ?? undefined);
    held.controller.abort(error);
    this.emit({ type: 'lost', term: held.info.term, reason, error });
    if (this.observed?.term === held.info.term && reason !== 'deadline') this.observe(null);
    this.scheduleCampaign(reason === 'resigned' ? this.campaignIntervalMs : 0);
  }

  /** Resigns `term` on the backend, bounded; never rejects. */
  private async endOnBackend(term: LeaderInfo): Promise<void> {
    const step = Promise.resolve().then(() => this.elector.resign(term));
    try {
      await settleWithin(step, this.ttlMs, () => timedOut('resign', this.ttlMs), this.clock);
    } catch (error) {
      this.emit({ type: 'error', error: toError(error) });
    }
  }

  private observe(leader: LeaderInfo | null): void {
    const before = this.observed;
    if (before?.id === leader?.id && before?.term === leader?.term) {
      this.observed = leader;
      return;
    }
    this.observed = leader;
    this.emit({ type: 'leader', leader });
  }

  private emit(event: CandidateEvent): void {
    for (const listener of [...this.listeners]) {
      try {
        listener(event);
      } catch {
        // a faulty listener must never break the candidate
      }
    }
  }
}

function abortReason(held: Held): NotLeaderError {
  const reason = held.controller.signal.reason;
  return reason instanceof NotLeaderError ? reason : new NotLeaderError('', held.info.term);
}

function timedOut(step: string, ms: number): Error {
  return new Error(`elector ${step} did not answer within ${Math.round(ms)} ms`);
}
