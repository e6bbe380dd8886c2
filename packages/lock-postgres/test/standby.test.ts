import { type ClaimRequest, isFleetcronError } from '@fleetcron/core';
import { type PostgresReplicated, startPostgresReplicated } from '@fleetcron/testkit';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresLock } from '../src/index.js';

// A lock whose pool reaches a read-only hot standby fails closed: every claim and lease call
// throws BackendUnavailableError (its cause a ReadOnlyServerError, SQLSTATE 25006), so no fire
// runs unprotected. Once that server is promoted, the same pool claims, and what the primary had
// recorded (replicated before the primary died) still decides.

let pair: PostgresReplicated;
const pools: pg.Pool[] = [];
const schema = 'standby';

beforeAll(async () => {
  pair = await startPostgresReplicated();
}, 90_000);

afterAll(async () => {
  await Promise.all(pools.map((pool) => pool.end().catch(() => {})));
  await pair?.close();
}, 60_000);

function lockOn(url: string): PostgresLock {
  const pool = new pg.Pool({ connectionString: url, max: 2 });
  pools.push(pool);
  return new PostgresLock(pool, { schema, statementTimeoutMs: 5000 });
}

const request = (key: string, fireAt: number, owner: string): ClaimRequest => ({
  key,
  fireAt,
  owner,
  leaseMs: 60_000,
  exclusive: false,
});

function expectReadOnlyFailure(error: unknown): void {
  expect(isFleetcronError(error, 'BACKEND_UNAVAILABLE'), String(error)).toBe(true);
  const cause = (error as Error).cause as { name?: string; code?: string } | undefined;
  expect(cause?.name).toBe('ReadOnlyServerError');
  expect(cause?.code).toBe('25006');
}

describe('PostgresLock on a hot standby', () => {
  it('fails closed on the standby, and claims on it once promoted', async () => {
    const [primaryUrl, standbyUrl] = pair.urls;
    const primary = lockOn(primaryUrl);
    await primary.migrate();
    const fireAt = Date.now() - 1000;
    const won = await primary.claim(request('job', fireAt, 'a'));
    expect(won.status).toBe('won');
    await pair.waitCaughtUp();

    const standby = lockOn(standbyUrl);
    const calls: [string, () => Promise<unknown>][] = [
      ['claim', () => standby.claim(request('job', fireAt + 1, 'b'))],
      ['claimMany', () => standby.claimMany([request('job', fireAt + 2, 'b')])],
      ['extend', () => standby.extend(won.status === 'won' ? won.lease : (undefined as never), 1)],
      ['migrate', () => standby.migrate()],
    ];
    for (const [name, call] of calls) {
      const error = await call().then(
        () => new Error(`${name} answered on a standby`),
        (e: unknown) => e,
      );
      expectReadOnlyFailure(error);
    }

    await pair.kill(0);
    await pair.promote();
    // The same pool, now on the promoted server: the fire the old primary recorded stays decided,
    // the next one is claimed.
    expect((await standby.claim(request('job', fireAt, 'b'))).status).toBe('lost');
    expect((await standby.claim(request('job', fireAt + 1, 'b'))).status).toBe('won');
  }, 90_000);
});
