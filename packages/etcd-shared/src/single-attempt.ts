import type { IOptions } from 'etcd3';

/**
 * A fault-handling policy that runs the call once: no retry, no circuit breaker. Shaped like
 * cockatiel's `noop` policy; the only part etcd3's connection pool calls is `execute`.
 */
export const runOnce = {
  execute<T>(fn: (context: { signal: AbortSignal; attempt: number }) => PromiseLike<T> | T) {
    return Promise.resolve().then(() => fn({ signal: new AbortController().signal, attempt: 0 }));
  },
};

/**
 * etcd3 `faultHandling` options that send each call once, for the host and globally. etcd3's
 * default circuit breaker opens after three failures and stays open for seconds after the server
 * is back (claims failed for ~2 s after a restart), and its global retry re-sends a call its
 * caller has already given up on. Callers bound every call with their own deadline and leave
 * retrying to the scheduler (or fail fast, as the CLI's one-shot commands), so they need neither.
 * A failed call still resets the host's channels, so the next call connects at once. Imports
 * nothing at run time: the CLI imports it from `@fleetcron/etcd-shared/single-attempt` and loads
 * etcd3 only for an etcd URL.
 */
export const SINGLE_ATTEMPT: NonNullable<IOptions['faultHandling']> = {
  host: () => runOnce as never,
  global: runOnce as never,
};
