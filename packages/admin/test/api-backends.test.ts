import { FleetClient, type Store, type TakenRunRequest } from '@fleetcron/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AdminHandler, createAdminHandler } from '../src/index.js';
import { BACKENDS, type BackendFixture } from './backends.js';
import { execution, seedFleet } from './fleet-fixture.js';

const WRITE = 'backend-write-0123456789';
const READ = 'backend-read-0123456789';

describe.each(Object.keys(BACKENDS))('every API route on the %s store', (backend) => {
  let fixture: BackendFixture;
  let store: Store;
  let handler: AdminHandler;
  let failed = 0;

  const get = async (path: string, token = READ) => {
    const response = await handler(
      new Request(`http://localhost/fc/api${path}`, {
        headers: { authorization: `Bearer ${token}` },
      }),
    );
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };
  const post = async (path: string, token = WRITE, body = '{}') => {
    const response = await handler(
      new Request(`http://localhost/fc/api${path}`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': 'application/json',
          'x-fleetcron-request': 'test',
        },
        body,
      }),
    );
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };

  beforeAll(async () => {
    fixture = await (BACKENDS[backend] as () => Promise<BackendFixture>)();
    store = fixture.store;
    failed = (await seedFleet(store)).failed;
    handler = createAdminHandler({
      fleet: new FleetClient({ store }),
      basePath: '/fc',
      tokens: [
        { token: WRITE, name: 'ops' },
        { token: READ, role: 'read', name: 'viewer' },
      ],
    });
  });
  afterAll(() => fixture?.close());

  it('GET me, fleet, instances, jobs, jobs/:name', async () => {
    expect((await get('/me')).body).toEqual({ role: 'read', name: 'viewer' });
    const fleet = await get('/fleet');
    expect(fleet.status).toBe(200);
    expect(fleet.body.backends).toMatchObject({ store: backend });
    const instances = await get('/instances');
    expect(
      (instances.body.instances as Array<{ instanceId: string }>).map((i) => i.instanceId),
    ).toEqual(['i-1']);
    const jobs = (await get('/jobs')).body.jobs as Array<{
      name: string;
      nextFires: unknown[];
      lastStatus: string;
    }>;
    expect(jobs.map((j) => [j.name, j.nextFires.length])).toEqual([
      ['billing', 5],
      ['cleanup', 5],
    ]);
    const one = await get('/jobs/billing');
    expect(one.body.job).toMatchObject({
      name: 'billing',
      paused: false,
      lastStatus: 'succeeded',
      drift: false,
    });
    expect((await get('/jobs/ghost')).status).toBe(404);
  });

  it('GET history: cursor paging over every run, status filter, typed errors', async () => {
    const ids = new Set<string>();
    let cursor: string | null = '';
    let pages = 0;
    while (cursor !== null) {
      const query: string = cursor ? `&cursor=${encodeURIComponent(cursor)}` : '';
      const page = (await get(`/jobs/billing/history?limit=7${query}`)).body as {
        executions: Array<{ id: string }>;
        nextCursor: string | null;
      };
      for (const e of page.executions) ids.add(e.id);
      cursor = page.nextCursor;
      pages++;
    }
    expect(ids.size).toBe(25);
    expect(pages).toBe(4);
    const onlyFailed = (await get('/jobs/billing/history?status=failed')).body.executions as Array<{
      status: string;
      error: string;
    }>;
    expect(onlyFailed).toHaveLength(failed);
    expect(onlyFailed.every((e) => e.status === 'failed' && e.error.includes('boom'))).toBe(true);
    expect((await get('/jobs/billing/history?status=nope')).body).toMatchObject({
      error: { code: 'INVALID_OPTION', field: 'status' },
    });
    expect((await get('/jobs/ghost/history')).body).toMatchObject({
      error: { code: 'UNKNOWN_JOB' },
    });
  });

  it('POST pause, resume (who asked is stored), run (one request, taken once); read role 403', async () => {
    expect((await post('/jobs/billing/pause', READ)).status).toBe(403);
    expect((await store.getJobState('billing')).paused).toBe(false);
    expect((await post('/jobs/billing/pause')).status).toBe(200);
    expect(await store.getJobState('billing')).toMatchObject({
      paused: true,
      pausedBy: 'admin:ops',
    });
    const paused = (await get('/jobs/billing')).body.job as { paused: boolean; pausedBy: string };
    expect(paused).toMatchObject({ paused: true, pausedBy: 'admin:ops' });
    expect((await post('/jobs/billing/resume')).status).toBe(200);
    expect(await store.getJobState('billing')).toMatchObject({ paused: false, pausedBy: null });
    const run = await post('/jobs/cleanup/run');
    expect(run.status).toBe(202);
    const [first, second] = await Promise.all([
      store.takeRunRequests?.(['cleanup'], 'i-1'),
      store.takeRunRequests?.(['cleanup'], 'i-2'),
    ]);
    const taken = [...(first ?? []), ...(second ?? [])];
    expect(taken.map((r) => [r.job, r.requestedBy])).toEqual([['cleanup', 'admin:ops']]);
    expect((await post('/jobs/ghost/run')).body).toMatchObject({ error: { code: 'UNKNOWN_JOB' } });
  });

  it('POST run with data, then GET run-requests/:id: pending, taken, decided with its run (read role)', async () => {
    const bad = await post(
      '/jobs/cleanup/run',
      WRITE,
      JSON.stringify({ data: 'x'.repeat(65 * 1024) }),
    );
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ error: { code: 'INVALID_OPTION', field: 'data' } });
    const run = await post(
      '/jobs/cleanup/run',
      WRITE,
      JSON.stringify({ data: { month: '2026-11' } }),
    );
    expect(run.status).toBe(202);
    const id = (run.body.request as { id: string }).id;
    const pending = await get(`/run-requests/${id}`);
    expect(pending.status).toBe(200);
    expect(pending.body).toMatchObject({
      request: { id, job: 'cleanup', state: 'pending', takes: 0, data: { month: '2026-11' } },
      executions: [],
      outcome: null,
    });
    // what a scheduler does: take it, decide it as a manual fire, record that fire's run
    const [taken] = ((await store.takeRunRequests?.(['cleanup'], 'i-1')) ??
      []) as TakenRunRequest[];
    expect(taken).toMatchObject({ id, data: { month: '2026-11' } });
    const held = (await get(`/run-requests/${id}`)).body.request;
    expect(held).toMatchObject({ state: 'taken', takenBy: 'i-1', takes: 1 });
    const fireAt = Date.now() + 1;
    expect(
      await store.decideRunRequest?.(id, (taken as TakenRunRequest).takeId, {
        fireAt,
        instanceId: 'i-1',
      }),
    ).toBe(true);
    const decided = (await get(`/run-requests/${id}`)).body;
    expect(decided).toMatchObject({
      request: { state: 'decided', fireAt, decidedBy: 'i-1' },
      executions: [],
      outcome: null,
    });
    const row = execution('cleanup', fireAt, {
      status: 'running',
      finishedAt: null,
      requestedBy: 'admin:ops',
    });
    await store.record(row);
    expect((await get(`/run-requests/${id}`)).body).toMatchObject({ outcome: null });
    await store.record({
      ...row,
      status: 'failed',
      finishedAt: fireAt + 40,
      error: 'Error: no ledger',
    });
    expect((await get(`/run-requests/${id}`)).body).toMatchObject({
      executions: [{ id: row.id, fireAt, status: 'failed', error: 'Error: no ledger' }],
      outcome: 'failed',
    });
    expect((await get('/run-requests/no-such-request')).body).toMatchObject({
      error: { code: 'UNKNOWN_RUN_REQUEST', field: 'id' },
    });
  });
});
