import { InvalidOptionError } from './errors.js';
import { assertPositiveMs } from './validate.js';

/** Exponential backoff: the n-th retry waits up to `min(maxMs, initialMs·factor^(n-1))`. */
export interface BackoffOptions {
  /** Delay before the first retry, in ms. */
  initialMs?: number;
  /** Upper bound of any delay, in ms. */
  maxMs?: number;
  /** Growth per retry, at least 1. Default 2. */
  factor?: number;
}

/** How a delay is drawn under its cap: `'full'`, a random time in [0, cap); `'none'`, the cap. */
export type Jitter = 'full' | 'none';

/** A validated backoff: {@link BackoffPlan.delayMs} gives the wait before retry `n` (1-based). */
export interface BackoffPlan {
  /** Wait before the `n`-th retry (n ≥ 1), ms. */
  delayMs(n: number): number;
}

/**
 * Validates a backoff (fields `${field}.backoff.*`, `${field}.jitter`, `${field}.random`) and
 * returns its plan. Shared by the `retry()` middleware and alert delivery.
 *
 * @throws InvalidOptionError for a bad value, naming the field.
 */
export function backoffPlan(
  field: string,
  backoff: BackoffOptions,
  defaults: { initialMs: number; maxMs: number },
  jitter: unknown = 'full',
  random: unknown = Math.random,
): BackoffPlan {
  const { initialMs = defaults.initialMs, maxMs = defaults.maxMs, factor = 2 } = backoff ?? {};
  assertPositiveMs(`${field}.backoff.initialMs`, initialMs);
  assertPositiveMs(`${field}.backoff.maxMs`, maxMs);
  if (typeof factor !== 'number' || !Number.isFinite(factor) || factor < 1) {
    throw new InvalidOptionError(
      `${field}.backoff.factor`,
      `must be a number >= 1, got ${String(factor)}.`,
    );
  }
  if (jitter !== 'full' && jitter !== 'none') {
    throw new InvalidOptionError(
      `${field}.jitter`,
      `must be 'full' or 'none', got ${String(jitter)}.`,
    );
  }
  if (typeof random !== 'function') {
    throw new InvalidOptionError(
      `${field}.random`,
      'must be a function returning a number in [0, 1).',
    );
  }
  const draw = random as () => number;
  return {
    delayMs(n) {
      const cap = Math.min(maxMs, initialMs * factor ** (n - 1));
      return jitter === 'full' ? draw() * cap : cap;
    },
  };
}
