import { Etcd3, type IOptions } from 'etcd3';
import { memberPolicies, runOnce } from './member-policy.js';

/**
 * The client the lock's own calls go through: the same hosts, credentials and gRPC options as
 * the user's `client`, with etcd3's retry and circuit-breaker policies replaced by a single
 * attempt. etcd3's default circuit breaker opens after three failures and stays open for
 * seconds after the server is back (claims failed for ~2 s after a restart), and its global
 * retry re-sends a call the lock has already given up on. The lock bounds every call with its
 * own deadline and leaves retrying to the scheduler, so it needs neither. A failed call still
 * resets the host's channels, so the next call connects at once. The user's client is not
 * changed; the lock closes this one in `close()`. Given several members, a member whose call
 * failed is left out of the next calls for a while (see `memberPolicies`).
 */
export function lockClientOf(client: Etcd3): Etcd3 {
  // `options` is protected in etcd3's typings; it holds the options the client was built with.
  const { options } = client as unknown as { options: IOptions };
  const several = Array.isArray(options.hosts) && options.hosts.length > 1;
  const member = several ? memberPolicies() : () => runOnce;
  return new Etcd3({
    ...options,
    faultHandling: {
      ...options.faultHandling,
      // Several members: a member that failed a call is left out for a while (member-policy.ts).
      host: (host: string) => member(host) as never,
      global: runOnce as never,
    },
  });
}
