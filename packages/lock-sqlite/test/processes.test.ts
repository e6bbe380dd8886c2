import { isFleetcronError } from '@fleetcron/core';
import Database from 'libsql';
import { afterEach, describe, expect, it } from 'vitest';
import { SqliteLock } from '../src/index.js';
import { tempFile } from './fixture.js';
import { holdWriteLock } from './holder.js';
import { type Claimer, type LedgerLine, startClaimer } from './processes.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Polls `check` every 20 ms until it is true; fails after `timeoutMs`. */
async function until(check: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Largest event-loop lag seen while `body` runs, in ms (a 10 ms interval timer's lateness). */
async function maxLoopLag<T>(body: () => Promise<T>): Promise<{ value: T; lagMs: number }> {
  let last = performance.now();
  let lagMs = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    lagMs = Math.max(lagMs, now - last - 10);
    last = now;
  }, 10);
  try {
    const value = await body();
    lagMs = Math.max(lagMs, performance.now() - last - 10);
    return { value, lagMs };
  } finally {
    clearInterval(timer);
  }
}

const wins = (lines: LedgerLine[]) =>
  lines.filter(
    (l): l is Extract<LedgerLine, { status: string }> => 'status' in l && l.status === 'won',
  );

describe('SqliteLock across OS processes', () => {
  it('8 processes claim the same 300 fires; one SIGKILLed while claiming, one mid-transaction: each fire won once, no corruption, no lost record, no stuck lock', async () => {
    const { file, remove } = tempFile();
    cleanups.push(remove);
    const lock = new SqliteLock(file, { busyTimeoutMs: 1000 });
    cleanups.push(() => lock.close());
    await lock.open();
    const key = 'shared-fires';
    const first = Date.now() - 60_000;
    const count = 300;
    const claimers: Claimer[] = Array.from({ length: 8 }, (_, i) =>
      startClaimer({ file, owner: `p${i}`, key, first, count }),
    );
    cleanups.push(() => {
      for (const c of claimers) c.child.kill('SIGKILL');
    });
    await Promise.all(claimers.map((c) => c.ready));
    const victim = claimers[7] as Claimer;
    await until(() => victim.lines.length >= 20, 60_000, 'the victim to answer 20 claims');
    victim.child.kill('SIGKILL');
    await victim.exited;
    // A writer killed inside its transaction, with an uncommitted claim record, while the
    // others are claiming.
    const holder = await holdWriteLock(file, true);
    await holder.kill();

    const survivors = claimers.slice(0, 7);
    const codes = await Promise.all(survivors.map((c) => c.exited));
    expect(codes, 'every surviving claimer finished cleanly').toEqual(Array(7).fill(0));
    for (const c of survivors) {
      expect(
        c.lines.filter((l) => 'error' in l),
        `${c.owner}: no failed claim`,
      ).toEqual([]);
      expect(c.lines, `${c.owner} answered every fire`).toHaveLength(count);
    }

    const db = new Database(file, { readonly: true });
    cleanups.push(() => {
      db.close();
    });
    expect(db.prepare('PRAGMA integrity_check').all()).toEqual([{ integrity_check: 'ok' }]);

    // Exactly one winner per fire across every ledger, the victim's included.
    const winners = new Map<number, { owner: string; token: number | null }[]>();
    for (const c of claimers) {
      for (const w of wins(c.lines)) {
        winners.set(w.fireAt, [
          ...(winners.get(w.fireAt) ?? []),
          { owner: c.owner, token: w.token },
        ]);
      }
    }
    const doubles = [...winners].filter(([, ws]) => ws.length > 1);
    expect(doubles, 'no fire won twice').toEqual([]);

    // Every fire has its record; every ledger win is the record (no lost claim record).
    const inspection = await lock.inspect(key);
    expect(inspection.fires.map((f) => f.fireAt)).toEqual(
      Array.from({ length: count }, (_, i) => first + i),
    );
    const records = new Map(inspection.fires.map((f) => [f.fireAt, f]));
    for (const [fireAt, [w]] of winners) {
      expect(records.get(fireAt), `record of fire ${fireAt}`).toMatchObject({
        owner: w?.owner,
        outcome: 'won',
        token: w?.token,
      });
    }
    // Records missing from the ledgers: only the victim's last claim may have committed
    // before it could print it.
    const unprinted = inspection.fires.filter((f) => !winners.has(f.fireAt));
    expect(unprinted.length).toBeLessThanOrEqual(1);
    for (const f of unprinted) expect(f.owner).toBe(victim.owner);
    const tokens = inspection.fires.map((f) => f.token);
    expect(new Set(tokens).size, 'fencing tokens are unique').toBe(count);
    expect((await lock.inspect('uncommitted')).fires, 'the killed transaction rolled back').toEqual(
      [],
    );

    // No stuck lock: a new writer gets the lock at once.
    const writer = new Database(file, { timeout: 0 });
    cleanups.push(() => {
      writer.close();
    });
    expect(() => writer.exec('BEGIN IMMEDIATE; ROLLBACK')).not.toThrow();
    const next = await lock.claim({
      key,
      fireAt: Date.now(),
      owner: 'test',
      leaseMs: 1000,
      exclusive: false,
    });
    expect(next.status).toBe('won');
  }, 180_000);

  it('a write lock held past busy_timeout (slow disk): typed error in time, the event loop never blocked, recovery after', async () => {
    const { file, remove } = tempFile();
    cleanups.push(remove);
    const lock = new SqliteLock(file, { busyTimeoutMs: 500 });
    cleanups.push(() => lock.close());
    await lock.open();
    const holder = await holdWriteLock(file);
    let held = true;
    cleanups.push(() => (held ? holder.kill() : undefined));
    const fireAt = Date.now();
    const claim = (owner: string, signal?: AbortSignal) =>
      lock.claim({ key: 'slow', fireAt, owner, leaseMs: 5000, exclusive: true, signal });

    const started = performance.now();
    const { value: error, lagMs } = await maxLoopLag(() =>
      claim('a').then(
        () => null,
        (e: unknown) => e,
      ),
    );
    const waited = performance.now() - started;
    expect(isFleetcronError(error, 'BACKEND_UNAVAILABLE'), String(error)).toBe(true);
    expect((error as Error).message, 'the error names SQLITE_BUSY').toMatch(/SQLITE_BUSY/);
    expect(waited, 'it waited about busy_timeout').toBeGreaterThanOrEqual(450);
    expect(waited).toBeLessThan(5000);
    expect(lagMs, 'the claim waited in the worker thread, not on the event loop').toBeLessThan(250);

    // Aborted before sending: rejected at once. Aborted while queued behind the held lock:
    // dropped before it runs, so the fire stays claimable.
    const before = new AbortController();
    before.abort();
    await expect(claim('b', before.signal)).rejects.toMatchObject({ code: 'BACKEND_UNAVAILABLE' });
    const blocker = claim('c'); // occupies the worker for busy_timeout
    const queued = new AbortController();
    const dropped = claim('d', queued.signal).then(
      () => null,
      (e: unknown) => e,
    );
    queued.abort();
    await expect(blocker).rejects.toMatchObject({ code: 'BACKEND_UNAVAILABLE' });
    const droppedError = await dropped;
    expect(isFleetcronError(droppedError, 'BACKEND_UNAVAILABLE'), 'dropped unsent').toBe(true);
    expect((droppedError as Error).message).toMatch(/given up on by the caller before it was sent/);

    await holder.kill();
    held = false;
    const after = await claim('e');
    expect(
      after.status,
      'after the writer is gone the fire is claimable (no aborted claim took it)',
    ).toBe('won');
  }, 60_000);

  it('on your Database (inline) the same held lock blocks the event loop for busy_timeout: why paths use a worker', async () => {
    const { file, remove } = tempFile();
    cleanups.push(remove);
    const db = new Database(file);
    cleanups.push(() => {
      db.close();
    });
    const lock = new SqliteLock(db, { busyTimeoutMs: 500, collectIntervalMs: 0 });
    await lock.open();
    const holder = await holdWriteLock(file);
    cleanups.push(() => holder.kill());
    const { value: error, lagMs } = await maxLoopLag(() =>
      lock
        .claim({ key: 'k', fireAt: Date.now(), owner: 'a', leaseMs: 1000, exclusive: false })
        .then(
          () => null,
          (e: unknown) => e,
        ),
    );
    expect(isFleetcronError(error, 'BACKEND_UNAVAILABLE'), String(error)).toBe(true);
    expect(lagMs, 'the synchronous driver held the event loop').toBeGreaterThanOrEqual(450);
  }, 30_000);
});
