import { Etcd3, type IOptions } from 'etcd3';
import { memberPolicies } from './member-policy.js';
import { SINGLE_ATTEMPT } from './single-attempt.js';

/**
 * A client with the same hosts, credentials and gRPC options as `client`, whose calls are sent
 * once ({@link SINGLE_ATTEMPT}). Given several members, a member whose call failed or went
 * unanswered is left out of the next calls for a while ({@link memberPolicies}). The user's
 * client is not changed; its owner closes the copy.
 */
export function singleAttemptClientOf(client: Etcd3): Etcd3 {
  // `options` is protected in etcd3's typings; it holds the options the client was built with.
  const { options } = client as unknown as { options: IOptions };
  const several = Array.isArray(options.hosts) && options.hosts.length > 1;
  const faultHandling = several
    ? {
        ...SINGLE_ATTEMPT,
        host: memberPolicies() as unknown as NonNullable<IOptions['faultHandling']>['host'],
      }
    : SINGLE_ATTEMPT;
  return new Etcd3({ ...options, faultHandling: { ...options.faultHandling, ...faultHandling } });
}
