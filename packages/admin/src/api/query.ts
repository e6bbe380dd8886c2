import { InvalidOptionError } from '@fleetcron/core';

/**
 * Reads `?limit=` as a page size from 1 to `max` (`fallback` when absent or empty).
 * @throws InvalidOptionError (field `limit`) for anything else.
 */
export function pageLimit(params: URLSearchParams, max: number, fallback: number): number {
  const raw = params.get('limit');
  if (raw === null || raw === '') return fallback;
  const limit = Number(raw);
  if (!Number.isInteger(limit) || limit < 1 || limit > max) {
    throw new InvalidOptionError('limit', `must be an integer from 1 to ${max}, got ${raw}.`);
  }
  return limit;
}

/** Reads an optional string parameter: `null` when absent or empty. */
export function optionalParam(params: URLSearchParams, name: string): string | null {
  const raw = params.get(name);
  return raw === null || raw === '' ? null : raw;
}
