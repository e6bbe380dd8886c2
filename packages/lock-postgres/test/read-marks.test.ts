import { isFleetcronError } from '@fleetcron/core';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { PostgresLock } from '../src/index.js';

// readMarks against a server that cannot be reached (port 1): every key is checked before
// anything is sent (a bad key is INVALID_OPTION, not BACKEND_UNAVAILABLE), an empty array
// answers without a round trip, a read fails BACKEND_UNAVAILABLE. The mark semantics are
// checked by the conformance suite (readMarksMatchInspect).

const pool = new pg.Pool({ connectionString: 'postgres://127.0.0.1:1/none', max: 1 });
afterAll(() => pool.end());
const lock = new PostgresLock(pool, { statementTimeoutMs: 2000 });
const errorOf = (call: () => Promise<unknown>) =>
  call().then(
    () => null,
    (e: unknown) => e,
  );

describe('PostgresLock.readMarks on an unreachable server', () => {
  it('refuses a bad key before sending, naming key', async () => {
    const error = await errorOf(() => lock.readMarks(['fine', 'bad \uD800']));
    expect(isFleetcronError(error, 'INVALID_OPTION'), String(error)).toBe(true);
    expect((error as { field?: string }).field).toBe('key');
  });

  it('answers [] without a round trip; fails BACKEND_UNAVAILABLE otherwise, aborted or not', async () => {
    expect(await lock.readMarks([])).toEqual({ marks: [] });
    const down = await errorOf(() => lock.readMarks(['a', 'b']));
    expect(isFleetcronError(down, 'BACKEND_UNAVAILABLE'), String(down)).toBe(true);
    const signal = AbortSignal.abort();
    const aborted = await errorOf(() => lock.readMarks(['a'], { signal }));
    expect(isFleetcronError(aborted, 'BACKEND_UNAVAILABLE'), String(aborted)).toBe(true);
  });
});
