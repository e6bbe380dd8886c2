/**
 * Where the parts of a sharded fire run: a pure function every instance evaluates on its own
 * view of the fleet, so no coordination is needed beyond the per-part claims (which decide).
 *
 * With `live` = the sorted ids of the live instances defining the job (this one included) and
 * `p` = this instance's position in it, part `i` is **preferred** by the instance at position
 * `i % live`: that instance claims it at the fire's time (delay 0). Every other instance claims
 * it only after a grace (so the parts of a dead, stopping or missing instance still run), in a
 * fallback order that rotates with the part, so the parts of one missing instance spread over
 * all the others instead of piling onto its neighbour. An instance that already won a part of
 * the fire waits one grace more before each fallback claim ({@link claimDelayMs}): instances
 * still holding nothing take the parts left over first.
 *
 * Spread bound (tested in core/test/shards/placement.test.ts, in every order racing claims can
 * land): with consistent views of live instances each runs exactly its preferred parts, at most
 * ⌈n / live⌉; a dead instance still listed has its parts spread over the others. When views
 * differ by one instance (a joiner not yet seen by everyone, a dead instance still listed by
 * some) and n ≤ live·(live − 1), no instance runs more than ⌈n / live⌉ + 1 parts while another
 * live instance runs none. For larger n, disagreeing views can exceed it (an instance that does
 * not see a joiner claims ⌈n / (live − 1)⌉ parts) until the views agree again.
 */

/** Input of {@link placeParts}. */
export interface PlacementInput {
  /** Number of parts of the fire (`shards: n`). */
  count: number;
  /**
   * Ids of the live instances defining the job, as this instance sees them (any order; sorted
   * here by UTF-16 code units, as the registry lists them). `null` when this instance has no view
   * yet: it then prefers no part and claims every part after the grace.
   */
  liveIds: readonly string[] | null;
  /** This instance's id (added to the view when missing from it). */
  self: string;
  /** How long non-preferred parts wait before they are claimed, ms. */
  graceMs: number;
}

/** When this instance claims one part. */
export interface PartPlacement {
  /** Part index, 0-based. */
  index: number;
  /** 0: preferred here (claimed at once); r ≥ 1: this instance is the part's r-th fallback. */
  rank: number;
  /** Delay after the fire's time before this instance claims the part, ms. */
  delayMs: number;
}

/** Sorts ids the way the registry lists instances (by UTF-16 code units). */
export function sortIds(ids: readonly string[]): string[] {
  return [...new Set(ids)].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

/**
 * The fallback rank of instance position `p` for part `index` among `live` positions: 0 for the
 * part's preferred instance (`index % live`), 1 … live − 1 for the others, in an order that
 * rotates with `⌊index / live⌋`.
 */
export function partRank(index: number, p: number, live: number): number {
  const owner = index % live;
  if (p === owner) return 0;
  const others = live - 1;
  const d = (p - owner - 1 + live) % live; // 0 … live − 2: distance after the owner
  const k = Math.floor(index / live) % others; // rotation of this round of parts
  return ((d - k + others) % others) + 1;
}

/**
 * This instance's plan for every part of a fire, ordered by delay (then index): preferred parts
 * at delay 0; a part of fallback rank r ≥ 1 after `graceMs + (r − 1) · graceMs / (live − 1)`
 * (all fallbacks start within two graces). Pure and deterministic.
 */
export function placeParts(input: PlacementInput): PartPlacement[] {
  const { count, self, graceMs } = input;
  const plan: PartPlacement[] = [];
  if (input.liveIds === null) {
    for (let index = 0; index < count; index++) plan.push({ index, rank: 1, delayMs: graceMs });
    return plan;
  }
  const live = sortIds([...input.liveIds, self]);
  const p = live.indexOf(self);
  const step = live.length > 1 ? graceMs / (live.length - 1) : 0;
  for (let index = 0; index < count; index++) {
    const rank = partRank(index, p, live.length);
    const delayMs = rank === 0 ? 0 : Math.round(graceMs + (rank - 1) * step);
    plan.push({ index, rank, delayMs });
  }
  return plan.sort((a, b) => a.delayMs - b.delayMs || a.index - b.index);
}

/**
 * When to claim a planned part, given how many parts of this fire this instance has won so far:
 * a preferred part at once; a fallback part at its planned delay (under two graces) while this
 * instance holds nothing, one grace later once it holds a part. Call it again when the planned
 * time comes (the count may have changed meanwhile).
 */
export function claimDelayMs(part: PartPlacement, held: number, graceMs: number): number {
  if (part.rank === 0) return 0;
  return held > 0 ? part.delayMs + graceMs : part.delayMs;
}

/**
 * The position of `self` among the live instances defining the job, and how many there are
 * (what `ctx.shard` says of a `shards: 'each'` run). `self` counts even when missing from the view.
 */
export function positionOf(
  liveIds: readonly string[] | null,
  self: string,
): { index: number; count: number } {
  const live = sortIds([...(liveIds ?? []), self]);
  return { index: live.indexOf(self), count: live.length };
}
