import { InvalidOptionError } from '../errors.js';

/** Most parts one fire may be split into (`shards: n`). */
export const MAX_SHARDS = 1024;

/**
 * Which part of a sharded fire an execution ran (`ctx.shard`, `Execution.shard`).
 *
 * - `shards: n`: part `index` (0-based) of `count` = n; each part runs exactly once fleet-wide.
 * - `shards: 'each'` (`each: true`): a broadcast run; `index` is this instance's position among the
 *   live instances defining the job (sorted by id) as this instance saw them, `count` how many it
 *   saw. Advisory: two instances may briefly see the fleet differently.
 */
export interface ShardInfo {
  /** 0-based part index (`'each'`: this instance's position among the live instances). */
  readonly index: number;
  /** Number of parts (`'each'`: number of live instances defining the job). */
  readonly count: number;
  /** `true` for a run of a `shards: 'each'` job (broadcast). Absent otherwise. */
  readonly each?: true;
}

/** Whether `value` is a well-formed {@link ShardInfo}. */
export function isShardInfo(value: unknown): value is ShardInfo {
  if (typeof value !== 'object' || value === null) return false;
  const { index, count, each } = value as Partial<Record<keyof ShardInfo, unknown>>;
  return (
    Number.isSafeInteger(count) &&
    (count as number) >= 1 &&
    Number.isSafeInteger(index) &&
    (index as number) >= 0 &&
    (index as number) < (count as number) &&
    (each === undefined || each === true)
  );
}

/**
 * A copy of `shard` with only its known fields, or `null` for `null`/`undefined`. Throws
 * {@link InvalidOptionError} (field `shard`) for anything else that is not a {@link ShardInfo}.
 * Stores call it in `record()` so what they keep is always well-formed.
 */
export function normalizeShard(shard: unknown): ShardInfo | null {
  if (shard === undefined || shard === null) return null;
  if (!isShardInfo(shard)) {
    throw new InvalidOptionError(
      'shard',
      `must be null or { index, count } with integers 0 <= index < count (and each: true for a broadcast run), got ${safeJson(shard)}.`,
    );
  }
  return shard.each
    ? { index: shard.index, count: shard.count, each: true }
    : { index: shard.index, count: shard.count };
}

/**
 * Encodes a shard for a text column or a JSON document: `null` for a plain fire, else compact
 * JSON (`{"index":2,"count":8}`). The inverse is {@link decodeShard}.
 */
export function encodeShard(shard: ShardInfo | null | undefined): string | null {
  const normalized = normalizeShard(shard);
  return normalized === null ? null : JSON.stringify(normalized);
}

/**
 * Decodes what {@link encodeShard} wrote (a JSON text, or an already-parsed object); `null` for
 * `null`, empty or unreadable values (a row written before shards existed reads as a plain fire).
 */
export function decodeShard(stored: unknown): ShardInfo | null {
  if (stored === null || stored === undefined || stored === '') return null;
  let value = stored;
  if (typeof stored === 'string') {
    try {
      value = JSON.parse(stored);
    } catch {
      return null;
    }
  }
  return isShardInfo(value) ? normalizeShard(value) : null;
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
