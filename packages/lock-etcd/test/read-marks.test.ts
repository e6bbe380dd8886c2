import { isFleetcronError } from '@fleetcron/core';
import { Etcd3 } from 'etcd3';
import { afterAll, describe, expect, it } from 'vitest';
import { EtcdLock } from '../src/index.js';

// readMarks against a server that cannot be reached (port 1): every key is checked before
// anything is sent (a bad key is INVALID_OPTION, not BACKEND_UNAVAILABLE), an empty array
// answers without a round trip, a read of several transactions fails BACKEND_UNAVAILABLE (no
// unhandled rejection from the others). The mark semantics are checked by the conformance
// suite (readMarksMatchInspect).

const client = new Etcd3({ hosts: '127.0.0.1:1' });
const lock = new EtcdLock(client, { requestTimeoutMs: 1000, etcdClock: false });
afterAll(async () => {
  await lock.close();
  client.close();
});
const errorOf = (call: () => Promise<unknown>) =>
  call().then(
    () => null,
    (e: unknown) => e,
  );

describe('EtcdLock.readMarks on an unreachable server', () => {
  it('refuses a bad key before sending, naming key (after more keys than one transaction holds)', async () => {
    const keys = [...Array.from({ length: 200 }, (_, i) => `k${i}`), 'bad \uD800'];
    const error = await errorOf(() => lock.readMarks(keys));
    expect(isFleetcronError(error, 'INVALID_OPTION'), String(error)).toBe(true);
    expect((error as { field?: string }).field).toBe('key');
  });

  it('answers [] without a round trip; fails BACKEND_UNAVAILABLE otherwise, aborted or not', async () => {
    expect(await lock.readMarks([])).toEqual({ marks: [] });
    const keys = Array.from({ length: 300 }, (_, i) => `k${i}`); // three transactions
    const down = await errorOf(() => lock.readMarks(keys));
    expect(isFleetcronError(down, 'BACKEND_UNAVAILABLE'), String(down)).toBe(true);
    const signal = AbortSignal.abort();
    const aborted = await errorOf(() => lock.readMarks(['a'], { signal }));
    expect(isFleetcronError(aborted, 'BACKEND_UNAVAILABLE'), String(aborted)).toBe(true);
  });
});
