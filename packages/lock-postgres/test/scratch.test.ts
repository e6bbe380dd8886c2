import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { PostgresLock } from '../src/index.js';

const url = 'postgres://postgres@127.0.0.1:55432/postgres';

describe('scratch', () => {
  it('claims', async () => {
    const pool = new pg.Pool({ connectionString: url });
    const schema = `s${Date.now()}`;
    const lock = new PostgresLock(pool, { schema });
    await lock.migrate();
    await lock.migrate();
    const now = Date.now();
    const a = await lock.claim({ key: 'k\0\\x', fireAt: now, owner: 'a', leaseMs: 10000, exclusive: true });
    console.log(a);
    console.log(await lock.claim({ key: 'k\0\\x', fireAt: now, owner: 'a', leaseMs: 10000, exclusive: true }));
    console.log(await lock.claim({ key: 'k\0\\x', fireAt: now, owner: 'b', leaseMs: 10000, exclusive: true }));
    console.log(await lock.claim({ key: 'k\0\\x', fireAt: now + 1000, owner: 'b', leaseMs: 10000, exclusive: true }));
    console.log(await lock.claim({ key: 'k\0\\x', fireAt: now + 2000, owner: 'b', leaseMs: 10000, exclusive: false }));
    console.log(await lock.claim({ key: 'k\0\\x', fireAt: now - 400000, owner: 'b', leaseMs: 10000, exclusive: false }));
    console.log(await lock.claim({ key: 'k\0\\x', fireAt: now + 400000, owner: 'b', leaseMs: 10000, exclusive: false }));
    console.log(JSON.stringify(await lock.inspect('k\0\\x'), null, 1));
    if (a.status === 'won') {
      console.log(await lock.extend(a.lease, 20000));
      console.log(await lock.release(a.lease), await lock.release(a.lease));
    }
    console.log(await lock.claim({ key: 'k\0\\x', fireAt: now + 3000, owner: 'c', leaseMs: 10000, exclusive: true }));
    expect(a.status).toBe('won');
    await pool.end();
  });
});
