import { BackendUnavailableError } from '@fleetcron/core';
import { settleWithin } from '@fleetcron/core/backend';

/** Backend name used in errors. */
export const BACKEND = 'etcd';

/** gRPC call options with a deadline `timeoutMs` from now. */
export interface Deadline {
  deadline: Date;
}

/**
 * Runs `fn` with a gRPC deadline `timeoutMs` from now, also bounded locally by core's
 * `settleWithin` (a late settlement is handled, never unhandled). Every failure becomes a
 * `BackendUnavailableError` naming `operation`, except those `keep` picks (passed as they are,
 * e.g. etcd3's `EtcdLeaseInvalidError` where a gone lease is an answer, not a failure).
 */
export async function callEtcd<T>(
  operation: string,
  timeoutMs: number,
  fn: (options: Deadline) => Promise<T>,
  keep: (error: unknown) => boolean = () => false,
): Promise<T> {
  try {
    return await settleWithin(fn({ deadline: new Date(Date.now() + timeoutMs) }), timeoutMs, () =>
      BackendUnavailableError.because(
        BACKEND,
        operation,
        `etcd did not answer within ${timeoutMs} ms (requestTimeoutMs)`,
      ),
    );
  } catch (error) {
    if (error instanceof BackendUnavailableError || keep(error)) throw error;
    throw new BackendUnavailableError(BACKEND, operation, error);
  }
}
