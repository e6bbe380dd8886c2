import {
  type CampaignRequest,
  type CampaignResult,
  Candidate,
  type CandidateEvent,
  type CandidateOptions,
  type ElectionCandidate,
  type LeaderInfo,
  type Leadership,
  MemoryElector,
  NotLeaderError,
} from '@fleetcron/core';

/** No term check: renew and resign act on whoever leads the election, whatever term is given. */
export class RenewsAnyTerm extends MemoryElector {
  override async renew(term: LeaderInfo, ttlMs: number): Promise<LeaderInfo | null> {
    const live = await this.leader(term.election);
    if (!live) return null;
    return super.renew(live, ttlMs);
  }
  override async resign(term: LeaderInfo): Promise<boolean> {
    const live = await this.leader(term.election);
    return live ? super.resign(live) : false;
  }
}

/** Terms that do not increase: every new leader gets term 1 (the counter restarts per leader). */
export class ReusesTerms extends MemoryElector {
  override async campaign(request: CampaignRequest): Promise<CampaignResult> {
    const result = await super.campaign(request);
    if (result.status === 'elected') result.leader.term = 1;
    return result;
  }
  override async renew(term: LeaderInfo, ttlMs: number): Promise<LeaderInfo | null> {
    const live = await this.leader(term.election);
    return live && live.id === term.id ? super.renew(live, ttlMs) : null;
  }
  override async resign(term: LeaderInfo): Promise<boolean> {
    const live = await this.leader(term.election);
    return live && live.id === term.id ? super.resign(live) : false;
  }
}

/**
 * A leader that does not abort on loss: once elected it believes it leads until it resigns. Its
 * signal never aborts and `isLeader` ignores the deadline (a candidate without the freeze rules).
 */
export const neverAborts = (options: CandidateOptions): ElectionCandidate => {
  const real = new Candidate(options);
  let believed: Leadership | null = null;
  real.onChange((event: CandidateEvent) => {
    if (event.type !== 'elected') return;
    const signal = new AbortController().signal; // never aborted
    const term = event.leader.term;
    believed = {
      election: options.election,
      term,
      signal,
      remainingMs: () => 1,
      assertValid: () => {},
    };
  });
  return {
    start: () => real.start(),
    get isLeader() {
      return believed !== null;
    },
    assertLeader() {
      if (!believed) throw new NotLeaderError(options.election, null);
      return believed;
    },
    onChange: (listener) => real.onChange(listener),
    resign: async () => {
      believed = null;
      await real.resign();
    },
  };
};
