import type { CandidateEvent, Clock, ElectionCandidate, Elector } from '@fleetcron/core';
import type { CandidateFactory } from './candidate-module.js';
import type { ElectionLedger } from './election-ledger.js';

/** What one {@link Participant} needs. */
export interface ParticipantOptions {
  id: string;
  election: string;
  ttlMs: number;
  campaignIntervalMs?: number;
  elector: Elector;
  clock?: Clock;
  ledger: ElectionLedger;
  factory: CandidateFactory;
  /** How often the leader acts (writes an `act` line when `isLeader` holds), ms. Default 25. */
  actEveryMs?: number;
}

/**
 * A candidate wired to the ledger: writes `elected` when it learns it won, `abort` when the
 * signal of its term aborts, and while it leads it acts every `actEveryMs`: it checks
 * `isLeader` synchronously and, when true, writes an `act` line under its term, the way a real
 * leader guards a side effect.
 */
export class Participant {
  readonly candidate: ElectionCandidate;
  private readonly timer: ReturnType<typeof setInterval>;
  readonly events: CandidateEvent[] = [];

  constructor(private readonly options: ParticipantOptions) {
    const { id, election, ttlMs, campaignIntervalMs, elector, clock, ledger } = options;
    this.candidate = options.factory({ elector, election, id, ttlMs, campaignIntervalMs, clock });
    this.candidate.onChange((event) => {
      this.events.push(event);
      if (event.type !== 'elected') return;
      const term = event.leader.term;
      ledger.write({ kind: 'elected', instance: id, term });
      const leadership = this.candidate.assertLeader();
      leadership.signal.addEventListener('abort', () =>
        ledger.write({ kind: 'abort', instance: id, term }),
      );
    });
    this.timer = setInterval(() => this.act(), options.actEveryMs ?? 25);
  }

  /** Starts campaigning. */
  start(): void {
    this.candidate.start();
  }

  /** The side effect a leader guards: `act` under the term, only while `isLeader` holds. */
  act(): void {
    if (!this.candidate.isLeader) return;
    let term: number;
    try {
      term = this.candidate.assertLeader().term;
    } catch {
      return;
    }
    this.options.ledger.write({ kind: 'act', instance: this.options.id, term });
  }

  /** Resigns and stops acting; never rejects. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.candidate.resign().catch(() => {});
  }
}
