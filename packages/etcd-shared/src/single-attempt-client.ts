import { Etcd3, type IOptions } from 'etcd3';
import { SINGLE_ATTEMPT } from './single-attempt.js';

/**
 * A client with the same hosts, credentials and gRPC options as `client`, whose calls are sent
 * once ({@link SINGLE_ATTEMPT}). The user's client is not changed; its owner closes the copy.
 */
export function singleAttemptClientOf(client: Etcd3): Etcd3 {
  // `options` is protected in etcd3's typings; it holds the options the client was built with.
  const { options } = client as unknown as { options: IOptions };
  return new Etcd3({
    ...options,
    faultHandling: { ...options.faultHandling, ...SINGLE_ATTEMPT },
  });
}
