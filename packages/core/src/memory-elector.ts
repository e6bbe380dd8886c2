import { type Clock, realClock } from './clock.js';
import {
  assertCampaign,
  type CampaignRequest,
  type CampaignResult,
  type Elector,
  type ElectorCapabilities,
  type LeaderInfo,
} from './elector.js';

/** Options of {@link MemoryElector}. */
export interface MemoryElectorOptions {
  /** The clock that plays the backend's clock (judges expiry). Default: real. */
  clock?: Clock;
}

/** What {@link MemoryElector} declares. */
export const MEMORY_ELECTOR_CAPABILITIES: Readonly<ElectorCapabilities> = Object.freeze({
  minTtlMs: 1,
  ttlGranularityMs: 1,
  durable: false,
  clock: 'backend',
});

interface ElectionState {
  leader: LeaderInfo | null;
  /** Last term issued; kept forever so terms never repeat. */
  lastTerm: number;
}

/**
 * The reference {@link Elector}: every rule of the contract, in process memory. Share one
 * instance between candidates in one process to simulate a fleet (tests, demos); it elects
 * nothing across processes. The elector conformance suite runs against it first.
 */
export class MemoryElector implements Elector {
  readonly backend = 'memory';
  readonly capabilities: ElectorCapabilities = { ...MEMORY_ELECTOR_CAPABILITIES };
  private readonly clock: Clock;
  private readonly elections = new Map<string, ElectionState>();

  constructor(options: MemoryElectorOptions = {}) {
    this.clock = options.clock ?? realClock;
  }

  async campaign(request: CampaignRequest): Promise<CampaignResult> {
    assertCampaign(request, this.capabilities, this.backend);
    const { election, id, ttlMs } = request;
    const now = this.clock.now();
    const state = this.stateOf(election);
    const live = this.live(state, now);
    if (live && live.id !== id) return { status: 'follower', leader: { ...live }, now };
    const leader: LeaderInfo = { election, id, term: ++state.lastTerm, expiresAt: now + ttlMs };
    state.leader = leader;
    return { status: 'elected', leader: { ...leader } };
  }

  async renew(term: LeaderInfo, ttlMs: number): Promise<LeaderInfo | null> {
    const now = this.clock.now();
    const state = this.elections.get(term.election);
    const live = state && this.live(state, now);
    if (!live || live.term !== term.term || live.id !== term.id) return null;
    live.expiresAt = now + ttlMs;
    return { ...live };
  }

  async resign(term: LeaderInfo): Promise<boolean> {
    const state = this.elections.get(term.election);
    const current = state?.leader;
    if (!state || !current || current.term !== term.term) return false;
    state.leader = null;
    return current.expiresAt > this.clock.now();
  }

  async leader(election: string): Promise<LeaderInfo | null> {
    const state = this.elections.get(election);
    const live = state && this.live(state, this.clock.now());
    return live ? { ...live } : null;
  }

  private live(state: ElectionState, now: number): LeaderInfo | null {
    if (state.leader && state.leader.expiresAt <= now) state.leader = null;
    return state.leader;
  }

  private stateOf(election: string): ElectionState {
    let state = this.elections.get(election);
    if (!state) {
      state = { leader: null, lastTerm: 0 };
      this.elections.set(election, state);
    }
    return state;
  }
}
