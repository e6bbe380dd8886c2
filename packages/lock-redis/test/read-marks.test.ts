import { isFleetcronError } from '@fleetcron/core';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { RedisLock } from '../src/index.js';

// readMarks against a server that cannot be reached (port 1): every key is checked before
// anything is sent (a bad key is INVALID_OPTION, not BACKEND_UNAVAILABLE), an empty array
// answers without a round trip, a read fails BACKEND_UNAVAILABLE within commandTimeoutMs. The
// mark semantics are checked by the conformance suite (readMarksMatchInspect).

const client = new Redis('redis://127.0.0.1:1', { retryStrategy: () => 100, lazyConnect: true });
client.on('error', () => {});
afterAll(() => client.disconnect());
const lock = new RedisLock(client, { commandTimeoutMs: 500 });
const errorOf = (call: () => Promise<unknown>) =>
  call().then(
    () => null,
    (e: unknown) => e,
  );

describe('RedisLock.readMarks on an unreachable server', () => {
  it('refuses a bad key before sending, naming key', async () => {
    const error = await errorOf(() => lock.readMarks(['fine', 'bad \uD800']));
    expect(isFleetcronError(error, 'INVALID_OPTION'), String(error)).toBe(true);
    expect((error as { field?: string }).field).toBe('key');
  });

  it('answers [] without a round trip; fails BACKEND_UNAVAILABLE otherwise, aborted or not', async () => {
    expect(await lock.readMarks([])).toEqual({ marks: [] });
    const keys = Array.from({ length: 1200 }, (_, i) => `k${i}`); // three script calls
    const down = await errorOf(() => lock.readMarks(keys));
    expect(isFleetcronError(down, 'BACKEND_UNAVAILABLE'), String(down)).toBe(true);
    const signal = AbortSignal.abort();
    const aborted = await errorOf(() => lock.readMarks(['a'], { signal }));
    expect(isFleetcronError(aborted, 'BACKEND_UNAVAILABLE'), String(aborted)).toBe(true);
  });
});
