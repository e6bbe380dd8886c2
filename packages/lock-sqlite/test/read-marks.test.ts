import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isFleetcronError } from '@fleetcron/core';
import { afterAll, describe, expect, it } from 'vitest';
import { SqliteLock } from '../src/index.js';

// readMarks on a file that cannot be opened (its directory does not exist): every key is
// checked before anything is sent (a bad key is INVALID_OPTION, not BACKEND_UNAVAILABLE), an
// empty array answers without a round trip, a read fails BACKEND_UNAVAILABLE. The mark
// semantics are checked by the conformance suite (readMarksMatchInspect).

const dir = mkdtempSync(join(tmpdir(), 'fleetcron-sqlite-marks-'));
const lock = new SqliteLock(join(dir, 'missing', 'lock.db'));
afterAll(async () => {
  await lock.close();
  rmSync(dir, { recursive: true, force: true });
});
const errorOf = (call: () => Promise<unknown>) =>
  call().then(
    () => null,
    (e: unknown) => e,
  );

describe('SqliteLock.readMarks on a file that cannot be opened', () => {
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
