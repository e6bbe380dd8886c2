import type { ShardInfo } from './shard-info.js';

/**
 * Lock keys of sharded fires.
 *
 * A part of a sharded fire is claimed like a fire of its own job: key {@link partKey}, the same
 * `fireAt`. A run of a `shards: 'each'` job is claimed on a key of its own per instance
 * ({@link eachKey}), so every instance wins its own run once and nobody else's.
 *
 * The separator is U+001F (INFORMATION SEPARATOR ONE), a control character: job names may not
 * contain control characters (`add()` refuses them), so a part key never equals a job name, and
 * the first U+001F of a key ends the job name (two jobs' keys never collide). Every built-in
 * lock accepts it: PostgreSQL and SQLite `text` hold it as is (only U+0000 is special there),
 * Redis keys are binary-safe (the key-part encoding leaves it), etcd keys are URI-encoded
 * (`%1F`).
 */
export const SHARD_KEY_SEPARATOR = '\u001F';

const SEP = SHARD_KEY_SEPARATOR;

/**
 * The lock key of part `index` of `count` of job `job`: `job␟part␟index/count`. The count is
 * part of the key, so when a deploy changes `shards`, the parts of the two splits never mix.
 */
export function partKey(job: string, index: number, count: number): string {
  return `${job}${SEP}part${SEP}${index}/${count}`;
}

/** The lock key of the `shards: 'each'` run of job `job` on instance `instanceId`: `job␟each␟id`. */
export function eachKey(job: string, instanceId: string): string {
  return `${job}${SEP}each${SEP}${instanceId}`;
}

/**
 * The lock key a fire of `job` was claimed on: the job name for a plain fire, else the part's
 * or the instance's key. `instanceId` is the instance that ran it (for `'each'` runs).
 */
export function fireLockKey(
  job: string,
  shard: ShardInfo | null | undefined,
  instanceId: string,
): string {
  if (!shard) return job;
  return shard.each ? eachKey(job, instanceId) : partKey(job, shard.index, shard.count);
}

/** Splits a key made here into its job and the rest; `null` for a plain job name. */
export function parseShardKey(
  key: string,
): { job: string; part: { index: number; count: number } } | { job: string; each: string } | null {
  const first = key.indexOf(SEP);
  if (first < 0) return null;
  const job = key.slice(0, first);
  const rest = key.slice(first + 1);
  if (rest.startsWith(`each${SEP}`)) return { job, each: rest.slice(5) };
  if (!rest.startsWith(`part${SEP}`)) return null;
  const match = /^(\d+)\/(\d+)$/.exec(rest.slice(5));
  if (!match) return null;
  return { job, part: { index: Number(match[1]), count: Number(match[2]) } };
}
