import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TakenRunRequest } from '@fleetcron/core';
import { DECIDED_RUN_REQUEST_KEEP_MS } from '@fleetcron/core/backend';
import Database from 'libsql';
import { afterEach, describe, expect, it } from 'vitest';
import { SqliteStore } from '../src/index.js';
import { COLLECT_PER_TAKE } from '../src/run-request-operations.js';
import { until } from './poll-outage.js';

// Exactly-once run requests on SQLite beyond the shared contract (./conformance.test.ts): real
// faults on real processes (a taker SIGKILLed after its take; a decision committed whose reply
// the taker never reads, then SIGKILLed), and the collection of decided requests.

const CHILD = fileURLToPath(new URL('./run-request-taker-process.ts', import.meta.url));

const dirs: string[] = [];
const stores: SqliteStore[] = [];
const children: ChildProcess[] = [];
const newFile = () => {
  const dir = mkdtempSync(join(tmpdir(), 'fleetcron-store-run-requests-'));
  dirs.push(dir);
  return join(dir, 'r.db');
};
const open = (file: string) => {
  const store = new SqliteStore(file);
  stores.push(store);
  return store;
};
afterEach(async () => {
  for (const child of children.splice(0)) child.kill('SIGKILL');
  await Promise.all(stores.splice(0).map((s) => s.close()));
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A taker process (see run-request-taker-process.ts) and the JSON lines it printed so far. */
function startTaker(args: {
  file: string;
  job: string;
  instanceId: string;
  leaseMs: number;
  decideFireAt?: number;
}) {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', '--conditions=source', CHILD, JSON.stringify(args)],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  children.push(child);
  const lines: { taken?: TakenRunRequest[]; sent?: true }[] = [];
  let buffer = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    buffer += chunk.toString();
    const parts = buffer.split('\n');
    buffer = parts.pop() ?? '';
    for (const part of parts) lines.push(JSON.parse(part));
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    lines,
    /** SIGKILLs the process and waits until it is gone. */
    async kill() {
      child.kill('SIGKILL');
      await exited;
    },
    /** What the process took, once it printed it. */
    async taken(): Promise<TakenRunRequest[]> {
      await until(() => lines.some((l) => l.taken), 30_000, `${args.instanceId} to print its take`);
      return lines.find((l) => l.taken)!.taken!;
    },
  };
}

describe('SqliteStore run requests under real faults', () => {
  it('a taker SIGKILLed after its take: another takes the request once the lease ends, the dead take decides nothing', async () => {
    const file = newFile();
    const store = open(file);
    const request = await store.requestRun({ job: 'report', requestedBy: 'alice', data: [1] });
    const taker = startTaker({ file, job: 'report', instanceId: 'doomed', leaseMs: 1_500 });
    const [dead] = await taker.taken();
    expect(dead).toMatchObject({ id: request.id, data: [1], takes: 1 });
    await taker.kill();

    let retaken: TakenRunRequest[] = [];
    let retakenAt = 0;
    await until(
      async () => {
        retaken = await store.takeRunRequests(['report'], 'survivor', { leaseMs: 60_000 });
        retakenAt = Date.now();
        return retaken.length > 0;
      },
      30_000,
      'the request taken again after the dead take’s lease',
    );
    expect(retakenAt, 'not taken again before the lease ended').toBeGreaterThanOrEqual(
      dead!.takenUntil,
    );
    expect(retaken).toMatchObject([{ id: request.id, data: [1], takes: 2 }]);
    expect(retaken[0]!.takeId).not.toBe(dead!.takeId);
    const decision = { fireAt: 1_700_000_000_000, instanceId: 'doomed' };
    expect(await store.decideRunRequest(request.id, dead!.takeId, decision)).toBe(false);
    const mine = { fireAt: 1_700_000_000_001, instanceId: 'survivor' };
    expect(await store.decideRunRequest(request.id, retaken[0]!.takeId, mine)).toBe(true);
    expect(await store.getRunRequest(request.id)).toMatchObject({
      ...{ state: 'decided', takes: 2, takenBy: 'survivor' },
      ...{ fireAt: mine.fireAt, decidedBy: 'survivor' },
    });
  }, 60_000);

  it('a decision committed whose reply is never read (taker SIGKILLed): the retried call answers true, decided once', async () => {
    const file = newFile();
    const store = open(file);
    const request = await store.requestRun({ job: 'report', requestedBy: 'alice' });
    const fireAt = 1_700_000_000_123;
    const taker = startTaker({
      file,
      job: 'report',
      instanceId: 'lost',
      leaseMs: 500,
      decideFireAt: fireAt,
    });
    const [take] = await taker.taken();
    await until(() => taker.lines.some((l) => l.sent), 30_000, 'the decision to be sent');
    await until(
      async () => (await store.getRunRequest(request.id))?.state === 'decided',
      30_000,
      'the decision committed by the blocked taker’s worker thread',
    );
    await taker.kill();
    const first = await store.getRunRequest(request.id);
    expect(first).toMatchObject({ state: 'decided', fireAt, decidedBy: 'lost', takes: 1 });

    // the retry after the lost reply (the taker's own decision again, on a new connection)
    const retry = await store.decideRunRequest(request.id, take!.takeId, {
      fireAt,
      instanceId: 'lost',
    });
    expect(retry, 'the same take is answered true again').toBe(true);
    expect(await store.getRunRequest(request.id), 'decided once: nothing changed').toEqual(first);
    await until(() => Date.now() > take!.takenUntil, 10_000, 'the take’s lease to end');
    expect(
      await store.takeRunRequests(['report'], 'other'),
      'a decided request is not taken',
    ).toEqual([]);
    expect(await store.getRunRequest(request.id)).toEqual(first);
  }, 60_000);
});

describe('SqliteStore decided run requests', () => {
  it('a take collects decided requests older than the keep time, at most 100 per take; newer ones stay', async () => {
    const file = newFile();
    const store = open(file);
    const kept = await store.requestRun({ job: 'report', requestedBy: 'alice' });
    const [take] = (await store.takeRunRequests(['report'], 'i')) as TakenRunRequest[];
    await store.decideRunRequest(kept.id, take!.takeId, { fireAt: 1, instanceId: 'i' });
    // Age decisions on the file itself: the keep time (1 h) is not waited for.
    const db = new Database(file);
    try {
      const now = Date.now();
      db.prepare('UPDATE fleetcron_run_requests SET decided_at = ? WHERE id = ?').run(
        now - DECIDED_RUN_REQUEST_KEEP_MS + 60_000,
        kept.id,
      );
      const old = db.prepare(
        `INSERT INTO fleetcron_run_requests (id, job, requested_by, requested_at, takes, take_id, decided_at, fire_at, decided_by)
         VALUES (?, 'report', 'bob', 0, 1, 't', ?, 1, 'i')`,
      );
      db.transaction(() => {
        for (let i = 0; i < COLLECT_PER_TAKE + 50; i++) {
          old.run(`old-${i}`, now - DECIDED_RUN_REQUEST_KEEP_MS - 60_000);
        }
      })();
      const count = () =>
        (db.prepare('SELECT count(*) AS n FROM fleetcron_run_requests').get() as { n: number }).n;
      expect(count()).toBe(COLLECT_PER_TAKE + 51);
      expect(await store.takeRunRequests(['other'], 'i')).toEqual([]);
      expect(count(), 'one take collects at most COLLECT_PER_TAKE').toBe(51);
      expect(await store.takeRunRequests(['other'], 'i')).toEqual([]);
      expect(count(), 'the next take collects the rest').toBe(1);
      expect(await store.getRunRequest('old-0')).toBeNull();
      expect((await store.getRunRequest(kept.id))?.state, 'kept within the keep time').toBe(
        'decided',
      );
    } finally {
      db.close();
    }
  });
});
