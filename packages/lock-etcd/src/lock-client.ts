import { Etcd3, type IOptions } from 'etcd3';

/**
 * A fault-handling policy that runs the call once: no retry, no circuit breaker. Shaped like
 * cockatiel's `noop` policy, the only part etcd3's connection pool calls is `execute`.
 */
const runOnce = {
  execute<T>(fn: (context: { signal: AbortSignal; attempt: number }) => PromiseLike<T> | T) {
    return Promise.resolve().then(() => fn({ signal: new AbortController().signal, attempt: 0 }));
  },
};

/**
 * The client the lock's own calls go through: the same hosts, credentials and gRPC options as
 * the user's `client`, with etcd3's retry and circuit-breaker policies replaced by a single
 * attempt. etcd3's default circuit breaker opens after three failures and stays open for
 * seconds after the server is back (claims failed for ~2 s after a restart), and its global
 * retry re-sends a call the lock has already given up on. The lock bounds every call with its
 * own deadline and leaves retrying to the scheduler, so it needs neither. A failed call still
 * resets the host's channels, so the next call connects at once. The user's client is not
 * changed; the lock closes this one in `close()`.
 */
export function lockClientOf(client: Etcd3): Etcd3 {
  // `options` is protected in etcd3's typings; it holds the options the client was built with.
  const { options } = client as unknown as { options: IOptions };
  return new Etcd3({
    ...options,
    faultHandling: {
      ...options.faultHandling,
      host: () => runOnce as never,
      global: runOnce as never,
    },
  });
}
