import { InvalidOptionError } from '@fleetcron/core';

/** Default key prefix of both Redis adapters. */
export const DEFAULT_PREFIX = 'fleetcron';

/** Throws {@link InvalidOptionError} unless `prefix` is a non-empty string without `{` or `}`. */
export function assertPrefix(prefix: unknown): asserts prefix is string {
  if (typeof prefix !== 'string' || prefix.length === 0 || /[{}]/.test(prefix)) {
    throw new InvalidOptionError(
      'prefix',
      `must be a non-empty string without "{" or "}" (it goes inside a Redis Cluster hash tag), got ${JSON.stringify(prefix)}.`,
    );
  }
}

/** `prefix` or {@link DEFAULT_PREFIX} when undefined, checked with {@link assertPrefix}. */
export function resolvePrefix(prefix: unknown): string {
  const resolved = prefix ?? DEFAULT_PREFIX;
  assertPrefix(resolved);
  return resolved;
}
