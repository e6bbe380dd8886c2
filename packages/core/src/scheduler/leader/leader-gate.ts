import { Candidate, type CandidateEvent } from '../../candidate.js';
import type { Clock } from '../../clock.js';
import type { Logger } from '../../logger.js';
import type { FireRun } from '../fire/index.js';
import { safePublish } from '../fire/index.js';
import type { ResolvedLeader } from './leader-options.js';

/** What the leader gate needs from its scheduler. */
export interface LeaderGateDeps {
  readonly leader: ResolvedLeader;
  readonly instanceId: string;
  readonly clock: Clock;
  readonly log: Logger;
}

/**
 * Leader mode's part of the scheduler (`mode: 'leader'`): a {@link Candidate} campaigning for
 * the election with this instance's id, started by `start()` and resigned at the end of
 * `stop()`. Before each claim of a plain fire the scheduler asks {@link claimsPlainFires}
 * (synchronous; checks the term's local deadline); fires launched while leading are tracked and
 * their signal is aborted (`NotLeaderError`, recorded `aborted`) when the term ends, before
 * another instance can be elected (the freeze-safety rule of leases, applied to the term).
 * Publishes `leader.changed`. In claims mode it does nothing and every fire is claimed.
 */
export class LeaderGate {
  private readonly candidate: Candidate | null;
  private readonly tracked = new Set<FireRun>();

  constructor(private readonly d: LeaderGateDeps) {
    const { mode, elector, election, leaderTtlMs } = d.leader;
    if (mode !== 'leader' || !elector) {
      this.candidate = null;
      return;
    }
    const ttlMs = leaderTtlMs;
    this.candidate = new Candidate({ elector, election, id: d.instanceId, ttlMs, clock: d.clock });
    this.candidate.onChange((event) => this.changed(event));
  }

  /** `true` while this instance leads (leader mode only). Synchronous. */
  get isLeader(): boolean {
    return this.candidate?.isLeader ?? false;
  }

  /** `true` in leader mode (one instance claims every plain fire), `false` in claims mode. */
  get leaderMode(): boolean {
    return this.candidate !== null;
  }

  /** Whether this instance claims plain fires now: always in claims mode, the leader's only in leader mode. */
  claimsPlainFires(): boolean {
    return this.candidate === null || this.candidate.isLeader;
  }

  /** Starts campaigning (leader mode). */
  start(): void {
    this.candidate?.start();
  }

  /** Hands leadership over at once and stops campaigning. Never rejects. */
  async resign(): Promise<void> {
    await this.candidate?.resign();
  }

  /** A fire launched while leading: aborted if the term ends while it is handled. */
  track(fire: FireRun): void {
    if (!this.candidate) return;
    this.tracked.add(fire);
    void fire.done.then(() => this.tracked.delete(fire));
  }

  private changed(event: CandidateEvent): void {
    const { instanceId, clock, log, leader } = this.d;
    if (event.type === 'error') {
      log.warn('fleetcron: leader election step failed; retrying', { error: event.error });
      return;
    }
    if (event.type !== 'elected' && event.type !== 'lost') return;
    const isLeader = event.type === 'elected';
    const term = isLeader ? event.leader.term : event.term;
    const at = clock.now();
    safePublish({
      type: 'leader.changed',
      instanceId,
      at,
      election: leader.election,
      isLeader,
      term,
    });
    if (isLeader) {
      log.info('fleetcron: elected leader', { election: leader.election, term });
      return;
    }
    log.warn('fleetcron: leadership lost; aborting the runs started as leader', {
      ...{ election: leader.election, term, reason: event.reason },
      runs: this.tracked.size,
    });
    for (const fire of this.tracked) fire.abort(event.error);
    this.tracked.clear();
  }
}
