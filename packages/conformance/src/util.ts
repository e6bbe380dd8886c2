import type { ClaimResult, Lease, LockCapabilities } from '@fleetcron/core';

/** Options of {@link pollUntil}. */
export interface PollOptions {
  /** Give up after this many ms. */
  timeoutMs: number;
  /** Wait between attempts, in ms. Default 50. */
  intervalMs?: number;
  /** Says what was awaited, for the error thrown on timeout. */
  message: string;
}

/**
 * Calls `attempt` until it returns a value other than `undefined` (or `false`), then returns
 * that value; throws after `timeoutMs`. Used instead of fixed sleeps everywhere.
 */
export async function pollUntil<T>(
  attempt: () => Promise<T | undefined | false> | T | undefined | false,
  options: PollOptions,
): Promise<T> {
  const deadline = Date.now() + options.timeoutMs;
  for (;;) {
    const value = await attempt();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) {
      throw new Error(`timed out after ${options.timeoutMs} ms waiting for: ${options.message}`);
    }
    await delay(options.intervalMs ?? 50);
  }
}

/** Resolves after `ms` of wall-clock time (pacing and random work only, never synchronisation). */
export function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Waits until the test process's clock has passed `epochMs` (backend and test share a host). */
export function waitUntilTime(epochMs: number, message: string): Promise<true> {
  return pollUntil(() => Date.now() > epochMs, {
    timeoutMs: Math.max(0, epochMs - Date.now()) + 10_000,
    intervalMs: 20,
    message,
  });
}

/** A lease length the backend accepts: at least `ms` and `minLeaseMs`, rounded up to granularity. */
export function leaseFor(capabilities: LockCapabilities, ms: number): number {
  const granularity = Math.max(1, capabilities.leaseGranularityMs);
  return Math.ceil(Math.max(ms, capabilities.minLeaseMs) / granularity) * granularity;
}

/** Asserts a claim was won and returns its lease, with a message naming what was expected. */
export function wonLease(result: ClaimResult, what: string): Lease {
  if (result.status !== 'won') {
    throw new Error(`${what}: expected the claim to be won, got ${describeResult(result)}`);
  }
  return result.lease;
}

/** One-line description of a claim result for assertion messages. */
export function describeResult(result: ClaimResult): string {
  switch (result.status) {
    case 'won':
      return `won (owner ${result.lease.owner}, token ${result.lease.token})`;
    case 'busy':
      return 'busy';
    case 'lost':
      return `lost (${result.reason})`;
  }
}

/** A fire time `offsetMs` from now, on a whole second (readable in failure messages). */
export function fireNear(offsetMs = 0): number {
  return Math.floor((Date.now() + offsetMs) / 1000) * 1000;
}

/** Makes a fixture-like resource, runs `body` with it and always closes it. */
export async function using<T extends { close(): Promise<void> }, R>(
  make: () => Promise<T>,
  body: (resource: T) => Promise<R>,
): Promise<R> {
  const resource = await make();
  try {
    return await body(resource);
  } finally {
    await resource.close();
  }
}

/** Process-level crash detectors: records unhandled rejections and uncaught exceptions. */
export interface CrashSpy {
  /** Everything caught so far, as `kind: stack` lines. */
  readonly caught: string[];
  /** Removes the listeners. */
  dispose(): void;
}

/** Starts recording unhandled rejections and uncaught exceptions (e.g. unhandled 'error' events). */
export function spyOnCrashes(): CrashSpy {
  const caught: string[] = [];
  const describe = (kind: string, value: unknown) =>
    `${kind}: ${value instanceof Error ? (value.stack ?? String(value)).split('\n').slice(0, 6).join('\n') : String(value)}`;
  const onRejection = (reason: unknown) => caught.push(describe('unhandledRejection', reason));
  const onException = (error: unknown) => caught.push(describe('uncaughtException', error));
  process.on('unhandledRejection', onRejection);
  process.on('uncaughtException', onException);
  return {
    caught,
    dispose() {
      process.off('unhandledRejection', onRejection);
      process.off('uncaughtException', onException);
    },
  };
}

/** A random integer in `[0, max)`. */
export function randomInt(max: number): number {
  return Math.floor(Math.random() * max);
}
