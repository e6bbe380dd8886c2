import type { Elector } from '../../elector.js';
import { MAX_ELECTION_LENGTH } from '../../elector.js';
import { InvalidOptionError, LeaseTooShortError } from '../../errors.js';
import { assertNonEmptyString, assertPositiveMs } from '../../validate.js';

/** Default election name of leader mode. */
export const DEFAULT_ELECTION = 'fleetcron';
/** Default term length of leader mode, ms (raised to the elector's minimum). */
export const DEFAULT_LEADER_TTL_MS = 15_000;
/** Default wait before an instance claims parts of a sharded fire that are not its own, ms. */
export const DEFAULT_SHARD_GRACE_MS = 2_000;

/** Who claims fires: every instance (`'claims'`) or only the elected leader (`'leader'`). */
export type SchedulerMode = 'claims' | 'leader';

/** The scheduler options of leader mode and sharded fires (part of `SchedulerOptions`). */
export interface LeaderOptions {
  /**
   * `'claims'` (default): every instance claims every fire; the claim decides who runs it.
   * `'leader'`: only the instance elected through `elector` claims the fires of plain jobs
   * (one claim per fire instead of one per instance); claims still decide each fire, so two
   * leaders overlapping for a moment cannot run a fire twice. Sharded jobs, catch-up, run
   * requests and the holder-lost sweep work the same in both modes.
   */
  mode?: SchedulerMode;
  /** Required with `mode: 'leader'` (and only then): e.g. `new MemoryElector()`, `PostgresElector`. */
  elector?: Elector;
  /** Leader mode: the election's name; one leader per name. Default `'fleetcron'`. */
  election?: string;
  /**
   * Leader mode: how long a term lasts without renewal, ms (renewed every third). Default 15,000,
   * raised to the elector's `minTtlMs` and rounded up to its `ttlGranularityMs`. A follower takes
   * over within about `leaderTtlMs` plus a third of it after the leader dies.
   */
  leaderTtlMs?: number;
  /**
   * Sharded jobs: how long after a fire an instance waits before it claims parts placed on
   * other instances (a dead, stopping or not-yet-seen instance's parts still run), ms. Default
   * 2,000. An instance that already holds a part of the fire waits one grace more.
   */
  shardGraceMs?: number;
}

/** Validated leader-mode options (internal). */
export interface ResolvedLeader {
  mode: SchedulerMode;
  elector: Elector | null;
  election: string;
  leaderTtlMs: number;
  shardGraceMs: number;
}

/** The keys of {@link LeaderOptions} (the compiler keeps the list complete). */
export const LEADER_OPTION_KEYS = Object.keys({
  mode: true,
  elector: true,
  election: true,
  leaderTtlMs: true,
  shardGraceMs: true,
} satisfies Record<keyof LeaderOptions, true>);

/** Validates the leader-mode options; every problem is a typed error naming the field. */
export function resolveLeaderOptions(o: LeaderOptions): ResolvedLeader {
  const mode = o.mode ?? 'claims';
  if (mode !== 'claims' && mode !== 'leader') {
    throw new InvalidOptionError(
      'mode',
      `must be 'claims' (every instance claims) or 'leader' (only the elected leader claims), got ${JSON.stringify(o.mode)}.`,
    );
  }
  const shardGraceMs = o.shardGraceMs ?? DEFAULT_SHARD_GRACE_MS;
  assertPositiveMs('shardGraceMs', shardGraceMs);
  if (mode === 'claims') {
    for (const field of ['elector', 'election', 'leaderTtlMs'] as const) {
      if (o[field] !== undefined) {
        throw new InvalidOptionError(
          field,
          `is only used with mode: 'leader'; set mode: 'leader' or remove ${field}.`,
        );
      }
    }
    return { mode, elector: null, election: DEFAULT_ELECTION, leaderTtlMs: 0, shardGraceMs };
  }
  const elector = checkElector(o.elector);
  const election = o.election ?? DEFAULT_ELECTION;
  assertNonEmptyString('election', election);
  if (election.length > MAX_ELECTION_LENGTH) {
    throw new InvalidOptionError(
      'election',
      `must be at most ${MAX_ELECTION_LENGTH} characters, got ${election.length}.`,
    );
  }
  const { minTtlMs, ttlGranularityMs } = elector.capabilities;
  const wanted = o.leaderTtlMs ?? Math.max(DEFAULT_LEADER_TTL_MS, minTtlMs);
  assertPositiveMs('leaderTtlMs', wanted);
  if (wanted < minTtlMs) {
    throw new LeaseTooShortError('leaderTtlMs', wanted, minTtlMs, elector.backend);
  }
  const step = ttlGranularityMs > 0 ? ttlGranularityMs : 1;
  const leaderTtlMs = Math.ceil(wanted / step) * step;
  return { mode, elector, election, leaderTtlMs, shardGraceMs };
}

function checkElector(value: unknown): Elector {
  const e = value as Partial<Elector> | undefined;
  const methods = ['campaign', 'renew', 'resign', 'leader'] as const;
  if (
    typeof e !== 'object' ||
    e === null ||
    methods.some((m) => typeof e[m] !== 'function') ||
    typeof e.capabilities?.minTtlMs !== 'number'
  ) {
    throw new InvalidOptionError(
      'elector',
      value === undefined
        ? "mode: 'leader' needs an elector: pass elector: new MemoryElector() (one process) or the elector of a lock package (PostgresElector, RedisElector, EtcdElector)."
        : 'must be an Elector (campaign, renew, resign, leader and capabilities), e.g. new MemoryElector().',
    );
  }
  return e as Elector;
}
