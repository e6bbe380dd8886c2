// Measures the run-request operations of SqliteStore on this machine: a take of a job with
// nothing to take while 10,000 decided requests (within the keep time) sit in the table, and a
// request → take → decide round per request, 1,000 rounds. Prints the figures (not a test).
// Usage: node --import tsx --conditions=source scripts/measure-run-requests.ts
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TakenRunRequest } from '@fleetcron/core';
import Database from 'libsql';
import { SqliteStore } from '../src/index.js';

const dir = mkdtempSync(join(tmpdir(), 'fleetcron-measure-run-requests-'));
const file = join(dir, 'm.db');
const store = new SqliteStore(file);
try {
  await store.open();
  const db = new Database(file);
  const insert = db.prepare(
    `INSERT INTO fleetcron_run_requests (id, job, requested_by, requested_at, takes, take_id, decided_at, fire_at, decided_by)
     VALUES (?, 'busy-job', 'x', 0, 1, 't', ?, 1, 'i')`,
  );
  db.transaction(() => {
    for (let i = 0; i < 10_000; i++) insert.run(`d-${i}`, Date.now());
  })();
  const plan = db
    .prepare(
      `EXPLAIN QUERY PLAN SELECT seq FROM fleetcron_run_requests
       WHERE job IN (SELECT value FROM json_each(?)) AND decided_at IS NULL
         AND (taken_until IS NULL OR taken_until <= ?) ORDER BY seq`,
    )
    .all('["busy-job"]', Date.now()) as { detail: string }[];
  console.log('take plan:', plan.map((p) => p.detail).join(' | '));
  db.close();

  const empty: number[] = [];
  for (let i = 0; i < 500; i++) {
    const start = performance.now();
    await store.takeRunRequests(['busy-job'], 'i');
    empty.push(performance.now() - start);
  }
  const rounds: number[] = [];
  for (let i = 0; i < 1_000; i++) {
    const start = performance.now();
    const request = await store.requestRun({ job: 'round', requestedBy: 'm', data: { i } });
    const [taken] = (await store.takeRunRequests(['round'], 'i')) as TakenRunRequest[];
    if (taken?.id !== request.id) throw new Error('took something else');
    if (!(await store.decideRunRequest(request.id, taken.takeId, { fireAt: i, instanceId: 'i' }))) {
      throw new Error('decision refused');
    }
    rounds.push(performance.now() - start);
  }
  const pct = (xs: number[], p: number) =>
    [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) * p)]!.toFixed(2);
  console.log(
    `empty take beside 10,000 decided: p50 ${pct(empty, 0.5)} ms, p99 ${pct(empty, 0.99)} ms (500 takes)`,
  );
  console.log(
    `request + take + decide: p50 ${pct(rounds, 0.5)} ms, p99 ${pct(rounds, 0.99)} ms (1,000 rounds, synchronous=FULL)`,
  );
} finally {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
}
