import { InvalidOptionError } from '../../errors.js';
import type { LockCapabilities } from '../../lock.js';
import type { CatchUpSpec } from '../../registry.js';
import { assertPositiveInteger, assertPositiveMs } from '../../validate.js';

/**
 * What a job does, when the fleet starts, about fires missed while the whole fleet was down:
 * `'skip'` (default) records them `skipped` (reason `missed`) and publishes `fire.missed`;
 * `'latest'` runs the newest missed fire once; `{ max, within }` runs up to `max` of the newest
 * missed fires, only those at most `within` ms old (default: the lock's claim window).
 */
export type CatchUpPolicy = CatchUpSpec;

/**
 * What happens to a fire whose holder died (its lease expired, its history row still
 * `running`): `'record'` (default) records it `lease_lost`; `'rerun'` also runs it once more on
 * another instance (at-least-once, opt-in), with `ctx.recovery = true`.
 */
export type HolderLostPolicy = 'record' | 'rerun';

/**
 * Checks `catchUp` (default `'skip'`); `'latest'` and `{ max }` need a lock with a catch-up mark
 * (`capabilities.durableMark` declared).
 */
export function checkCatchUp(
  value: unknown,
  capabilities: LockCapabilities,
  backend: string,
): CatchUpPolicy {
  const policy = checkCatchUpValue(value);
  if (policy !== 'skip' && capabilities.durableMark === undefined) {
    throw new InvalidOptionError(
      'catchUp',
      `the ${backend} lock keeps no catch-up mark (capabilities.durableMark), so missed fires cannot be caught up exactly once; use 'skip' or a lock with a mark.`,
    );
  }
  return policy;
}

function checkCatchUpValue(value: unknown): CatchUpPolicy {
  if (value === undefined || value === 'skip' || value === 'latest') return value ?? 'skip';
  if (typeof value !== 'object' || value === null) {
    throw new InvalidOptionError(
      'catchUp',
      `must be 'skip', 'latest' or { max, within }, got ${JSON.stringify(value)}.`,
    );
  }
  const { max, within, ...rest } = value as { max?: unknown; within?: unknown };
  const extra = Object.keys(rest);
  if (extra.length > 0) {
    throw new InvalidOptionError('catchUp', `unknown key ${extra[0]}; use { max, within }.`);
  }
  assertPositiveInteger('catchUp.max', max);
  if (within !== undefined && within !== null) assertPositiveMs('catchUp.within', within);
  return { max, within: (within as number | null | undefined) ?? null };
}

/**
 * Checks `onHolderLost` (default `'record'`); `'rerun'` needs a lock with a catch-up mark (it
 * decides which instance re-runs, once).
 */
export function checkHolderLost(
  value: unknown,
  capabilities: LockCapabilities,
  backend: string,
): HolderLostPolicy {
  const policy = value ?? 'record';
  if (policy !== 'record' && policy !== 'rerun') {
    throw new InvalidOptionError(
      'onHolderLost',
      `must be 'record' or 'rerun', got ${JSON.stringify(policy)}.`,
    );
  }
  if (policy === 'rerun' && capabilities.durableMark === undefined) {
    throw new InvalidOptionError(
      'onHolderLost',
      `'rerun' needs a lock with a catch-up mark (capabilities.durableMark) to re-run once; the ${backend} lock has none.`,
    );
  }
  return policy;
}
