/**
 * The Elector contract: how instances of a fleet elect one leader per named election, judged by
 * the backend's clock, with a strictly increasing **term** as fencing token.
 *
 * An `Elector` is the backend's part: a few one-round-trip steps (campaign, renew, resign, read
 * the leader), like a `Lock`. Holding leadership safely (renewing every third of the TTL, the
 * local monotonic deadline, the `AbortSignal`, the synchronous `assertLeader()`) is the same for
 * every backend and lives in {@link Candidate} (`candidate.ts`).
 */
import { FleetcronError, InvalidOptionError, LeaseTooShortError } from './errors.js';
import { assertNonEmptyString, assertPositiveMs } from './validate.js';

/** What a backend can do, declared as data (read by {@link Candidate} and the conformance suite). */
export interface ElectorCapabilities {
  /** Shortest TTL the backend can hold, in ms (etcd: 2000). */
  minTtlMs: number;
  /** TTLs are rounded up to a multiple of this, in ms (etcd: 1000; others: 1). */
  ttlGranularityMs: number;
  /** A term and its leader survive a server restart (no second leader after one). */
  durable: boolean;
  /** Whose clock judges expiry: `backend` (PostgreSQL `now()`, Redis `TIME`, etcd lease TTLs) or `client`. */
  clock: 'backend' | 'client';
}

/** The leader of an election, as the backend holds it. */
export interface LeaderInfo {
  /** The election's name. */
  election: string;
  /** The leader's candidate id (usually the instance id). */
  id: string;
  /** Fencing token: strictly increases per election, across leaders and restarts. */
  term: number;
  /** When the term expires unless renewed, by the backend's clock, epoch ms (informational). */
  expiresAt: number;
}

/** One campaign step: become leader of `election` for `ttlMs` unless another live leader exists. */
export interface CampaignRequest {
  /** The election's name: any string up to 512 characters. */
  election: string;
  /** The candidate's id; must be unique among the candidates of the election. */
  id: string;
  /** How long the term lasts unless renewed, in ms. */
  ttlMs: number;
  /**
   * Aborted when the caller gives up on this step. Once aborted, the adapter must not send it
   * (nor re-send it from a client-side queue); a step already sent cannot be called back: its
   * late win is resigned by the caller.
   */
  signal?: AbortSignal;
}

/**
 * The answer to a campaign step. `elected`: a NEW term (also when `id` led already: a term is
 * never handed out twice). `follower`: another candidate holds a live term (`leader`), with the
 * backend's time `now` so the caller can try again right when that term expires.
 */
export type CampaignResult =
  | { status: 'elected'; leader: LeaderInfo }
  | { status: 'follower'; leader: LeaderInfo; now: number };

/**
 * A backend that elects leaders. Implementations must:
 *
 * - elect in one atomic step: a campaign succeeds only when no live term of another candidate
 *   exists (judged by `capabilities.clock`), and then starts a new term;
 * - issue terms that strictly increase per election, across leaders, resignations and restarts;
 * - start a term's TTL no earlier than the moment the campaign (or renewal) request was sent;
 * - renew and resign only the term given (a stale term gets `null` / `false`, never the new one);
 * - throw `BackendUnavailableError` (never answer `follower`) when the backend cannot be reached.
 */
export interface Elector {
  /** Backend name used in errors and events, e.g. `memory`, `postgres`. */
  readonly backend: string;
  /** What this backend can do. */
  readonly capabilities: ElectorCapabilities;
  /** One campaign step (one round trip where the backend allows). */
  campaign(request: CampaignRequest): Promise<CampaignResult>;
  /** Renews `term` for `ttlMs` from now; `null` when it is no longer the live term. */
  renew(term: LeaderInfo, ttlMs: number): Promise<LeaderInfo | null>;
  /** Ends `term` at once so another candidate can be elected; `true` when it was still live. */
  resign(term: LeaderInfo): Promise<boolean>;
  /** The live leader of `election`, or `null` when there is none. */
  leader(election: string): Promise<LeaderInfo | null>;
  /** Frees what the adapter created itself (timers, etcd leases); never closes your client. */
  close?(): Promise<void>;
}

/**
 * Thrown by `candidate.assertLeader()` when this instance is not (or no longer) the leader: it
 * never was, it resigned, the backend said its term ended, or its local deadline passed (a
 * freeze, renewals failing). Stop before any further side effect: another instance may lead.
 */
export class NotLeaderError extends FleetcronError {
  /** The election. */
  readonly election: string;
  /** The term that ended, or `null` when this instance was not leader at all. */
  readonly term: number | null;
  constructor(election: string, term: number | null, cause?: unknown) {
    super(
      'NOT_LEADER',
      term === null
        ? `not the leader of election ${JSON.stringify(election)}`
        : `leadership of election ${JSON.stringify(election)} (term ${term}) was lost; another instance may lead`,
      { cause },
    );
    this.election = election;
    this.term = term;
  }
}

/** Longest election name, in characters (as for job names). */
export const MAX_ELECTION_LENGTH = 512;

/**
 * Checks a campaign's inputs against `capabilities`; throws {@link InvalidOptionError} (or
 * {@link LeaseTooShortError} for a TTL below `minTtlMs`) naming the field. Adapters call it at
 * the start of `campaign()`; `Candidate` (in `@fleetcron/core`) at construction.
 */
export function assertCampaign(
  request: Pick<CampaignRequest, 'election' | 'id' | 'ttlMs'>,
  capabilities: ElectorCapabilities,
  backend: string,
): void {
  assertNonEmptyString('election', request.election);
  if (request.election.length > MAX_ELECTION_LENGTH) {
    throw new InvalidOptionError(
      'election',
      `must be at most ${MAX_ELECTION_LENGTH} characters, got ${request.election.length}.`,
    );
  }
  assertNonEmptyString('id', request.id);
  assertPositiveMs('ttlMs', request.ttlMs);
  if (request.ttlMs < capabilities.minTtlMs) {
    throw new LeaseTooShortError('ttlMs', request.ttlMs, capabilities.minTtlMs, backend);
  }
  const granularity = capabilities.ttlGranularityMs;
  if (granularity > 1 && request.ttlMs % granularity !== 0) {
    throw new InvalidOptionError(
      'ttlMs',
      `the ${backend} backend holds TTLs in steps of ${granularity} ms; use a multiple of ${granularity}, e.g. ${Math.ceil(request.ttlMs / granularity) * granularity}.`,
    );
  }
}
