import { BackendUnavailableError } from '@fleetcron/core';
import { settleWithin } from '@fleetcron/core/backend';
import { Etcd3, type IOptions } from 'etcd3';

/** Backend name used in errors. */
export const BACKEND = 'etcd';

/** A fault-handling policy that runs the call once (as in `@fleetcron/lock-etcd`). */
const runOnce = {
  execute<T>(fn: (context: { signal: AbortSignal; attempt: number }) => PromiseLike<T> | T) {
    return Promise.resolve().then(() => fn({ signal: new AbortController().signal, attempt: 0 }));
  },
};

/**
 * The client the store's calls go through: the user's client options with etcd3's retry and
 * circuit-breaker policies replaced by one attempt (etcd3's breaker keeps failing calls for
 * seconds after a server restart). The user's client is not changed; `close()` closes this one.
 */
export function storeClientOf(client: Etcd3): Etcd3 {
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

/** gRPC call options with a deadline `timeoutMs` from now. */
export interface Deadline {
  deadline: Date;
}

/**
 * Runs `fn` with a gRPC deadline, also bounded locally (a late settlement is handled, never
 * unhandled); every failure becomes `BackendUnavailableError` naming `operation`.
 */
export async function callEtcd<T>(
  operation: string,
  timeoutMs: number,
  fn: (options: Deadline) => Promise<T>,
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
    if (error instanceof BackendUnavailableError) throw error;
    throw new BackendUnavailableError(BACKEND, operation, error);
  }
}

/** A random lease id in `[1, 2^53)`: exact as a JavaScript number and as an int64. */
export function randomLeaseId(): number {
  return 1 + Math.floor(Math.random() * (Number.MAX_SAFE_INTEGER - 1));
}
