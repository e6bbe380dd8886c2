import { afterAll } from 'vitest';

/**
 * A value made on first use and shared by every test of one test file: `make` runs on the first
 * call (so a file whose tests never need it starts nothing) and `teardown` runs in the file's
 * `afterAll`, only if it was made. Call it at the top level of a test file. A failed `make` is
 * kept: every later call rejects with the same error instead of starting again.
 *
 * @example
 * const cluster = perFile(() => startRedisCluster(), (c) => c.close());
 * it('...', async () => { const { nodes } = await cluster(); });
 */
export function perFile<T>(
  make: () => Promise<T>,
  teardown: (value: T) => Promise<void> | void,
): () => Promise<T> {
  let made: Promise<T> | undefined;
  afterAll(async () => {
    if (!made) return;
    const value = await made.then(
      (v) => ({ v }),
      () => undefined,
    );
    if (value) await teardown(value.v);
  }, 60_000);
  return () => {
    made ??= make();
    return made;
  };
}

/**
 * A server of this test file's own (or anything with `close()`), started on first use and closed
 * after the file: `perFile(start, (s) => s.close())`.
 *
 * @example
 * const durable = fileServer(() => startRedis({ strategy: 'managed', appendOnly: true }));
 */
export function fileServer<S extends { close(): Promise<void> }>(
  start: () => Promise<S>,
): () => Promise<S> {
  return perFile(start, (server) => server.close());
}
