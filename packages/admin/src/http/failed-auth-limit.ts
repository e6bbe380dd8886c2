import { type Clock, InvalidOptionError } from '@fleetcron/core';

/** How many refused sign-ins (401) a client address may cause per window before it gets 429. */
export interface FailedAuthLimitOptions {
  /** Refused requests allowed per address and window. Default 10. */
  attempts?: number;
  /** Window length, ms. Default 60 000. */
  windowMs?: number;
  /** Most addresses remembered at once (the oldest is forgotten first). Default 10 000. */
  maxAddresses?: number;
}

/** The limiter the handler asks before authenticating and tells after each 401. */
export interface FailedAuthLimit {
  /** Ms until `address` may try again, or 0 when it may try now. */
  blockedFor(address: string): number;
  /** Counts one refused request of `address`. */
  fail(address: string): void;
}

interface Window {
  start: number;
  failures: number;
}

function positiveInteger(field: string, value: unknown, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) {
    throw new InvalidOptionError(field, `must be a positive integer, got ${String(value)}.`);
  }
  return value;
}

/**
 * A fixed-window counter of refused requests per client address, in bounded memory: at most
 * `maxAddresses` windows are kept, the least recently started forgotten first, so a flood of
 * addresses costs a fixed amount of memory (at worst it forgets a slow guesser early). An
 * address past its limit is refused every API request, with or without a valid token, until its
 * window ends: answering a right guess differently would keep the guessing going.
 */
export function createFailedAuthLimit(
  options: FailedAuthLimitOptions | false | undefined,
  clock: Pick<Clock, 'monotonic'>,
): FailedAuthLimit | null {
  if (options === false) return null;
  if (options !== undefined && (typeof options !== 'object' || options === null)) {
    throw new InvalidOptionError(
      'failedAuthLimit',
      'must be an object { attempts, windowMs, maxAddresses } or false.',
    );
  }
  const attempts = positiveInteger('failedAuthLimit.attempts', options?.attempts, 10);
  const windowMs = positiveInteger('failedAuthLimit.windowMs', options?.windowMs, 60_000);
  const maxAddresses = positiveInteger(
    'failedAuthLimit.maxAddresses',
    options?.maxAddresses,
    10_000,
  );
  const windows = new Map<string, Window>();
  const current = (address: string): Window | undefined => {
    const window = windows.get(address);
    if (window && clock.monotonic() - window.start >= windowMs) {
      windows.delete(address);
      return undefined;
    }
    return window;
  };
  return {
    blockedFor(address) {
      const window = current(address);
      if (!window || window.failures < attempts) return 0;
      return Math.max(1, window.start + windowMs - clock.monotonic());
    },
    fail(address) {
      const window = current(address);
      if (window) {
        window.failures++;
        return;
      }
      if (windows.size >= maxAddresses) {
        const oldest = windows.keys().next().value as string;
        windows.delete(oldest);
      }
      windows.set(address, { start: clock.monotonic(), failures: 1 });
    },
  };
}
