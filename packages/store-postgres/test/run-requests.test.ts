import { ReplyDroppingProxy, waitFor } from '@fleetcron/testkit';
import { postgresDatabase } from '@fleetcron/testkit/vitest';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { PostgresStore } from '../src/index.js';
import { storeFixtures } from './fixture.js';

// Exactly-once run requests beyond the conformance suite, on the real server: replies lost on
// the network (the statement committed, the client's connection dropped before the answer), a
// table made before exactly-once requests, a release announced on LISTEN, decided requests
// collected after an hour.

const databaseUrl = postgresDatabase();
const create = storeFixtures(databaseUrl);
const decision = { fireAt: 1_700_000_000_000, instanceId: 'inst-a' };

/**
 * A store in the fixture's schema on a pool of one connection through a
 * {@link ReplyDroppingProxy} that reads PostgreSQL's replies (it loses one after it committed),
 * with `body` run and everything closed after it.
 */
async function throughCutter(
  body: (setup: {
    store: PostgresStore;
    other: PostgresStore;
    cutter: ReplyDroppingProxy;
    admin: pg.Pool;
  }) => Promise<void>,
): Promise<void> {
  const fixture = await create();
  const cutter = await ReplyDroppingProxy.start(await databaseUrl(), { protocol: 'postgres' });
  const pool = new pg.Pool({ connectionString: cutter.url, max: 1 });
  try {
    const store = new PostgresStore(pool, { schema: fixture.schema });
    const other = (await fixture.newStore()) as PostgresStore;
    await body({ store, other, cutter, admin: fixture.admin });
  } finally {
    await pool.end();
    await cutter.close();
    await fixture.close();
  }
}

describe('PostgresStore run requests', () => {
  it('a decision whose reply is lost: the store asks again, is answered true, and the request is decided once', async () => {
    await throughCutter(async ({ store, other, cutter }) => {
      const request = await other.requestRun({ job: 'lost-decision', requestedBy: 'alice' });
      const [taken] = await store.takeRunRequests(['lost-decision'], 'inst-a');
      expect(taken?.id).toBe(request.id);

      cutter.dropNextReply = true;
      expect(await store.decideRunRequest(request.id, taken!.takeId, decision)).toBe(true);
      expect(cutter.dropped, 'the first answer was lost (committed, connection dropped)').toBe(1);

      const state = await other.getRunRequest(request.id);
      expect(state).toMatchObject({ state: 'decided', takes: 1, takenBy: 'inst-a' });
      expect(state).toMatchObject({ fireAt: decision.fireAt, decidedBy: 'inst-a' });
      expect(
        await other.takeRunRequests(['lost-decision'], 'inst-b', { leaseMs: 1 }),
        'a decided request is never taken again',
      ).toEqual([]);
      expect(
        await other.decideRunRequest(request.id, 'another-take', { ...decision, fireAt: 1 }),
        'no other take decides it',
      ).toBe(false);
      expect((await other.getRunRequest(request.id))?.fireAt).toBe(decision.fireAt);
    });
  }, 60_000);

  it('a take whose reply is lost holds the request until its lease ends; then another client takes it', async () => {
    await throughCutter(async ({ store, other, cutter }) => {
      const leaseMs = 1500;
      const request = await other.requestRun({ job: 'lost-take', requestedBy: 'bob' });

      cutter.dropNextReply = true;
      const lost = await store.takeRunRequests(['lost-take'], 'inst-a', { leaseMs });
      expect(cutter.dropped, 'the take committed, its answer was lost').toBe(1);
      expect(lost, 'the repeated take finds the request held by the lost one').toEqual([]);
      const held = await other.getRunRequest(request.id);
      expect(held).toMatchObject({ state: 'taken', takes: 1, takenBy: 'inst-a' });

      const retaken = await waitFor(
        async () => {
          const got = await other.takeRunRequests(['lost-take'], 'inst-b');
          return got.length > 0 ? { got, at: Date.now() } : undefined;
        },
        { timeoutMs: 15_000, message: 'the request taken again after the lost take’s lease' },
      );
      expect(retaken.at, 'not before the lost take’s lease ended').toBeGreaterThanOrEqual(
        (held?.takenUntil ?? 0) - 50,
      );
      const [again] = retaken.got;
      expect(again).toMatchObject({ id: request.id, takes: 2 });
      expect(await other.decideRunRequest(request.id, again!.takeId, decision)).toBe(true);
      expect(await other.getRunRequest(request.id)).toMatchObject({
        ...{ state: 'decided', takes: 2, takenBy: 'inst-b' },
      });
    });
  }, 60_000);

  it('migrate() upgrades a run-request table made before exactly-once requests: its request is taken and decided', async () => {
    const fixture = await create();
    const schema = `${fixture.schema}_rr`;
    try {
      // The table, index and insert of the previous version (requests deleted when taken).
      await fixture.admin.query(`CREATE SCHEMA "${schema}";
        CREATE TABLE "${schema}".fleetcron_run_requests (id text COLLATE "C" PRIMARY KEY,
          job text COLLATE "C" NOT NULL, requested_by text NOT NULL,
          requested_at bigint NOT NULL, seq bigserial NOT NULL);
        CREATE INDEX "fleetcron_runreq_job" ON "${schema}".fleetcron_run_requests (job, seq);
        INSERT INTO "${schema}".fleetcron_run_requests (id, job, requested_by, requested_at)
        VALUES ('old-1', 'report', 'cli', 1700000000000);`);
      const store = new PostgresStore(fixture.admin, { schema });
      await store.migrate();
      const old = { id: 'old-1', job: 'report', requestedBy: 'cli', requestedAt: 1.7e12 };
      expect(await store.getRunRequest('old-1')).toMatchObject({
        ...{ ...old, data: null, state: 'pending', takes: 0, takenBy: null, decidedAt: null },
      });
      const newer = await store.requestRun({ job: 'report', requestedBy: 'ui', data: [1] });

      const taken = await store.takeRunRequests(['report'], 'inst-a');
      expect(
        taken.map((r) => r.id),
        'the old request first',
      ).toEqual(['old-1', newer.id]);
      expect(taken[0]).toMatchObject({ ...old, data: null, takes: 1 });
      expect(taken[1]?.data).toEqual([1]);
      expect(await store.decideRunRequest('old-1', taken[0]!.takeId, decision)).toBe(true);
      expect(await store.getRunRequest('old-1')).toMatchObject({
        ...{ state: 'decided', fireAt: decision.fireAt, decidedBy: 'inst-a' },
      });

      await store.migrate(); // idempotent on the upgraded table
      expect((await store.getRunRequest('old-1'))?.state).toBe('decided');
      const { rows } = await fixture.admin.query<{ indexname: string }>(
        `SELECT indexname FROM pg_indexes WHERE schemaname = $1 ORDER BY indexname`,
        [schema],
      );
      expect(rows.map((r) => r.indexname).filter((n) => /runreq|rundec/.test(n))).toEqual([
        'fleetcron_rundec_at',
        'fleetcron_runreq_job',
      ]);
    } finally {
      await fixture.admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await fixture.close();
    }
  }, 60_000);

  it('an instance of the previous version (it deletes what it takes) never takes a decided request', async () => {
    const fixture = await create();
    try {
      const store = (await fixture.newStore()) as PostgresStore;
      const decidedOne = await store.requestRun({ job: 'mixed', requestedBy: 'a' });
      const heldOne = await store.requestRun({ job: 'mixed', requestedBy: 'b' });
      const [takeA, takeB] = await store.takeRunRequests(['mixed'], 'new-instance');
      expect(await store.decideRunRequest(decidedOne.id, takeA!.takeId, decision)).toBe(true);

      // The previous version's take statement, as an older instance still runs it.
      const table = `"${fixture.schema}".fleetcron_run_requests`;
      const { rows } = await fixture.admin.query<{ id: string }>(
        `DELETE FROM ${table} WHERE id IN (SELECT id FROM ${table} WHERE job = ANY($1::text[])
           ORDER BY seq FOR UPDATE SKIP LOCKED) RETURNING id`,
        [['mixed']],
      );
      expect(
        rows.map((r) => r.id),
        'the old take sees the held request only',
      ).toEqual([heldOne.id]);
      expect((await store.getRunRequest(decidedOne.id))?.state).toBe('decided');
      expect(
        await store.decideRunRequest(heldOne.id, takeB!.takeId, decision),
        'the new holder learns the old instance took it: not run twice',
      ).toBe(false);
    } finally {
      await fixture.close();
    }
  }, 60_000);

  it('a release is announced on LISTEN like a new request', async () => {
    const fixture = await create();
    try {
      const listening = (await fixture.newStore()) as PostgresStore;
      const taker = (await fixture.newStore()) as PostgresStore;
      const woken: string[] = [];
      const unsubscribe = listening.watchRunRequests((job) => woken.push(job));
      try {
        // LISTEN is up once a new request is announced (polled: LISTEN starts asynchronously).
        await waitFor(
          async () => {
            await taker.requestRun({ job: 'listen-up', requestedBy: 'test' });
            return woken.includes('listen-up');
          },
          { timeoutMs: 15_000, intervalMs: 100, message: 'LISTEN to take effect' },
        );
        const request = await taker.requestRun({ job: 'released', requestedBy: 'test' });
        await waitFor(() => woken.includes('released'), { message: 'the new request announced' });
        const [taken] = await taker.takeRunRequests(['released'], 'inst-a');
        woken.length = 0;
        await taker.releaseRunRequest(request.id, taken!.takeId);
        await waitFor(() => woken.includes('released'), {
          timeoutMs: 15_000,
          message: 'the release announced',
        });
        expect(woken, 'announced once').toEqual(['released']);
        await taker.releaseRunRequest(request.id, taken!.takeId); // released already: no-op
        expect((await taker.getRunRequest(request.id))?.state).toBe('pending');
      } finally {
        unsubscribe();
      }
    } finally {
      await fixture.close();
    }
  }, 60_000);

  it('takes collect requests decided over an hour ago and keep newer ones', async () => {
    const fixture = await create();
    try {
      const store = (await fixture.newStore()) as PostgresStore;
      const ids: string[] = [];
      for (const job of ['old-decided', 'new-decided']) {
        const { id } = await store.requestRun({ job, requestedBy: 'test' });
        const [taken] = await store.takeRunRequests([job], 'inst-a');
        expect(await store.decideRunRequest(id, taken!.takeId, decision)).toBe(true);
        ids.push(id);
      }
      const hourAndMinute = 61 * 60_000;
      await fixture.admin.query(
        `UPDATE "${fixture.schema}".fleetcron_run_decisions
         SET decided_at = decided_at - ${hourAndMinute} WHERE id = $1`,
        [ids[0]],
      );
      expect((await store.getRunRequest(ids[0]!))?.state, 'kept until a take').toBe('decided');
      expect(await store.takeRunRequests(['unrelated'], 'inst-b')).toEqual([]);
      expect(await store.getRunRequest(ids[0]!), 'decided over an hour ago: collected').toBeNull();
      expect((await store.getRunRequest(ids[1]!))?.state, 'decided just now: kept').toBe('decided');
    } finally {
      await fixture.close();
    }
  }, 60_000);
});
