import {
  FleetClient,
  MemoryLock,
  Scheduler,
  ScheduleServer,
  type Store,
  type StoredSchedule,
} from '@fleetcron/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AdminActionRecord, type AdminHandler, createAdminHandler } from '../src/index.js';
import { BACKENDS, type BackendFixture } from './backends.js';
import { until } from './browser.js';

const WRITE = 'schedules-write-0123456789';
const READ = 'schedules-read-0123456789';

type Body = Record<string, unknown> & {
  error?: { code: string; field?: string; message: string };
  schedule?: StoredSchedule;
};

const cronAt3 = { kind: 'cron', expression: '0 3 * * *', tz: 'Europe/Berlin' };

describe.each(Object.keys(BACKENDS))('the stored-schedule routes on the %s store', (backend) => {
  let fixture: BackendFixture;
  let store: Store;
  let handler: AdminHandler;
  let fleet: FleetClient;
  let scheduler: Scheduler;
  let server: ScheduleServer;
  const actions: AdminActionRecord[] = [];

  const call = async (
    path: string,
    init: { method?: string; token?: string; body?: unknown; headers?: Record<string, string> },
  ) => {
    const method = init.method ?? 'GET';
    const response = await handler(
      new Request(`http://localhost/fc/api${path}`, {
        method,
        headers: {
          authorization: `Bearer ${init.token ?? WRITE}`,
          ...(method === 'POST'
            ? { 'content-type': 'application/json', 'x-fleetcron-request': 'test' }
            : {}),
          ...init.headers,
        },
        body:
          method === 'POST'
            ? typeof init.body === 'string'
              ? init.body
              : JSON.stringify(init.body ?? {})
            : undefined,
      }),
    );
    return { status: response.status, body: (await response.json()) as Body };
  };
  const get = (path: string, token = READ) => call(path, { token });
  const post = (path: string, body: unknown, token = WRITE) =>
    call(path, { method: 'POST', body, token });
  const ids = async () =>
    (await fleet.listSchedules({ limit: 1000 })).schedules.map((s) => `${s.id}@${s.version}`);

  beforeAll(async () => {
    fixture = await (BACKENDS[backend] as () => Promise<BackendFixture>)();
    store = fixture.store;
    fleet = new FleetClient({ store });
    handler = createAdminHandler({
      fleet,
      basePath: '/fc',
      tokens: [
        { token: WRITE, name: 'ops' },
        { token: READ, role: 'read', name: 'viewer' },
      ],
      onAction: (record) => actions.push(record),
      onError: (error) => {
        throw error;
      },
    });
    // One live instance serving the handler `reports.daily` (nothing fires: 03:00 Berlin).
    scheduler = new Scheduler({
      lock: new MemoryLock(),
      store,
      instanceId: 'serving-1',
      heartbeatMs: 300,
    });
    server = new ScheduleServer({
      scheduler,
      store,
      pollMs: 200,
      handlers: { 'reports.daily': () => {} },
    });
    await server.start();
    scheduler.start();
  });
  afterAll(async () => {
    await server?.stop();
    await scheduler?.stop();
    await fixture?.close();
  });

  it('POST schedules creates (201, version 1, by the signed-in name, audited); read role and cross-site 403 store nothing', async () => {
    const created = await post('/schedules', {
      id: 'acme/daily',
      handler: 'reports.daily',
      trigger: cronAt3,
      data: { customer: 'acme' },
      options: { leaseMs: 60_000, note: 'daily report' },
      note: 'ticket 42',
    });
    expect(created.status).toBe(201);
    expect(created.body.schedule).toMatchObject({
      id: 'acme/daily',
      version: 1,
      enabled: true,
      data: { customer: 'acme' },
      options: { leaseMs: 60_000, note: 'daily report' },
      createdBy: 'admin:ops',
      updatedBy: 'admin:ops',
    });
    expect(actions.at(-1)).toMatchObject({
      action: 'schedule.create',
      job: 'schedule:acme/daily',
      schedule: 'acme/daily',
      version: 1,
      by: 'admin:ops',
      note: 'ticket 42',
    });
    const definition = { id: 'refused', handler: 'reports.daily', trigger: cronAt3 };
    const readOnly = await post('/schedules', definition, READ);
    expect(readOnly).toMatchObject({ status: 403, body: { error: { code: 'FORBIDDEN' } } });
    const crossSite = await call('/schedules', {
      method: 'POST',
      body: definition,
      headers: { origin: 'https://evil.example' },
    });
    expect(crossSite).toMatchObject({
      status: 403,
      body: { error: { code: 'CROSS_SITE_REFUSED' } },
    });
    expect(await ids()).toEqual(['acme/daily@1']);
  });

  it('bad input answers 400 with the typed code and the field, and stores nothing', async () => {
    const base = { handler: 'reports.daily', trigger: cronAt3 };
    const cases: Array<[unknown, string, string]> = [
      [
        { ...base, trigger: { kind: 'cron', expression: '61 * * * *' } },
        'INVALID_CRON',
        'trigger.expression',
      ],
      [{ ...base, trigger: { ...cronAt3, tz: 'Mars/Olympus' } }, 'UNKNOWN_TIMEZONE', 'trigger.tz'],
      [{ ...base, handler: '9lives' }, 'INVALID_OPTION', 'handler'],
      [{ ...base, data: 'x'.repeat(70_000) }, 'INVALID_OPTION', 'data'],
      [{ ...base, options: { leaseMS: 1000 } }, 'INVALID_OPTION', 'options.leaseMS'],
      [{ ...base, options: { startAt: 2000, endAt: 1000 } }, 'INVALID_OPTION', 'options.endAt'],
      [
        { ...base, options: { retry: { attempts: 0 } } },
        'INVALID_OPTION',
        'options.retry.attempts',
      ],
      [{ ...base, colour: 'red' }, 'INVALID_OPTION', 'colour'],
      [{ ...base, id: 'bad id' }, 'INVALID_OPTION', 'id'],
      [{ ...base, note: 5 }, 'INVALID_OPTION', 'note'],
      ['{not json', 'INVALID_OPTION', 'body'],
      [`{"data":"${'x'.repeat(130 * 1024)}"}`, 'INVALID_OPTION', 'body'],
    ];
    for (const [body, code, field] of cases) {
      const answer = await post('/schedules', body);
      expect({ field, status: answer.status, error: answer.body.error }).toMatchObject({
        status: 400,
        error: { code, field },
      });
      expect(answer.body.error?.message).toContain(field.split('.').at(-1) as string);
    }
    expect(await ids()).toEqual(['acme/daily@1']);
    // A payload near the 64 KiB bound fits in a request (the job routes' bodies stop at 4 KiB).
    const big = await post('/schedules', { ...base, id: 'big', data: 'y'.repeat(60_000) });
    expect(big.status).toBe(201);
    const taken = await post('/schedules', { ...base, id: 'big' });
    expect(taken).toMatchObject({
      status: 409,
      body: { error: { code: 'DUPLICATE_SCHEDULE', field: 'id' } },
    });
    expect((await post('/schedules/big/remove', {})).status).toBe(200);
  });

  it('GET schedules pages by cursor, filters by handler, and names the instances serving each', async () => {
    for (const id of ['p1', 'p2', 'p3', 'p4']) {
      const handlerName = id === 'p4' ? 'nobody.has.this' : 'reports.daily';
      const made = await post('/schedules', { id, handler: handlerName, trigger: cronAt3 });
      expect(made.status).toBe(201);
    }
    const seen: string[] = [];
    let cursor: string | null = '';
    let pages = 0;
    while (cursor !== null) {
      const query = cursor ? `&cursor=${encodeURIComponent(cursor)}` : '';
      const page = (await get(`/schedules?limit=2${query}`)).body as {
        schedules: StoredSchedule[];
        nextCursor: string | null;
      };
      seen.push(...page.schedules.map((s) => s.id));
      cursor = page.nextCursor;
      pages++;
    }
    expect(seen).toEqual(['acme/daily', 'p1', 'p2', 'p3', 'p4']);
    expect(pages).toBe(3);
    const filtered = (await get('/schedules?handler=nobody.has.this')).body.schedules as Array<{
      id: string;
    }>;
    expect(filtered.map((s) => s.id)).toEqual(['p4']);
    // The live instance picks the schedules up and publishes them in its next heartbeat.
    const served = await until('serving-1 to serve acme/daily and p1..p3', async () => {
      const list = (await get('/schedules')).body.schedules as Array<{
        id: string;
        servedBy: string[];
        unserved: boolean;
      }>;
      return list.filter((s) => s.servedBy.includes('serving-1')).length === 4 ? list : null;
    });
    expect(served?.map((s) => [s.id, s.servedBy, s.unserved])).toEqual([
      ['acme/daily', ['serving-1'], false],
      ['p1', ['serving-1'], false],
      ['p2', ['serving-1'], false],
      ['p3', ['serving-1'], false],
      ['p4', [], true],
    ]);
    expect((await get('/schedules?limit=0')).body.error).toMatchObject({
      code: 'INVALID_OPTION',
      field: 'limit',
    });
    expect((await get('/schedules?cursor=garbage')).body.error).toMatchObject({
      code: 'INVALID_OPTION',
      field: 'cursor',
    });
  });

  it('GET schedules/:id answers the schedule (an id with a slash percent-encoded), 404 for none', async () => {
    const one = await get('/schedules/acme%2Fdaily');
    expect(one.status).toBe(200);
    expect(one.body.schedule).toMatchObject({
      id: 'acme/daily',
      handler: 'reports.daily',
      servedBy: ['serving-1'],
      unserved: false,
    });
    expect((await get('/schedules/p4')).body.schedule).toMatchObject({
      servedBy: [],
      unserved: true,
    });
    const none = await get('/schedules/ghost');
    expect(none).toMatchObject({
      status: 404,
      body: { error: { code: 'UNKNOWN_SCHEDULE', field: 'id' } },
    });
    expect((await get('/schedules/%E0%A4%A')).body.error).toMatchObject({ field: 'id' });
  });

  it('POST update needs the version read: a stale one answers 409 and changes nothing', async () => {
    const path = '/schedules/p1/update';
    const missing = await post(path, { trigger: { kind: 'every', ms: 60_000 } });
    expect(missing).toMatchObject({
      status: 400,
      body: { error: { code: 'INVALID_OPTION', field: 'expectedVersion' } },
    });
    const updated = await post(path, {
      expectedVersion: 1,
      trigger: { kind: 'cron', expression: '30 4 * * *', tz: 'UTC' },
      data: { v: 2 },
      options: { timeoutMs: 5000 },
      note: 'move to 04:30',
    });
    expect(updated.status).toBe(200);
    expect(updated.body.schedule).toMatchObject({
      version: 2,
      trigger: { kind: 'cron', expression: '30 4 * * *', tz: 'UTC' },
      data: { v: 2 },
      options: { timeoutMs: 5000 },
      updatedBy: 'admin:ops',
      createdBy: 'admin:ops',
    });
    expect(actions.at(-1)).toMatchObject({
      action: 'schedule.update',
      schedule: 'p1',
      version: 2,
      note: 'move to 04:30',
    });
    const stale = await post(path, { expectedVersion: 1, data: { v: 3 } });
    expect(stale).toMatchObject({
      status: 409,
      body: { error: { code: 'SCHEDULE_CONFLICT', field: 'expectedVersion' } },
    });
    expect(stale.body.error?.message).toContain('version 2');
    const badCron = await post(path, {
      expectedVersion: 2,
      trigger: { kind: 'cron', expression: '0 25 * * *' },
    });
    expect(badCron).toMatchObject({
      status: 400,
      body: { error: { code: 'INVALID_CRON', field: 'trigger.expression' } },
    });
    expect(await fleet.getSchedule('p1')).toMatchObject({ version: 2, data: { v: 2 } });
    // an option set to null goes back to the handler's default
    const cleared = await post(path, { expectedVersion: 2, options: { timeoutMs: null } });
    expect(cleared.body.schedule).toMatchObject({ version: 3, options: {} });
    expect(
      (await post('/schedules/ghost/update', { expectedVersion: 1 })).body.error,
    ).toMatchObject({ code: 'UNKNOWN_SCHEDULE' });
    expect((await post(path, { expectedVersion: 3 }, READ)).status).toBe(403);
  });

  it('POST enable / disable / remove: versioned, audited, 409 when stale, 403 for the read role', async () => {
    expect((await post('/schedules/p2/disable', {}, READ)).status).toBe(403);
    const disabled = await post('/schedules/p2/disable', { note: 'holiday' });
    expect(disabled.body.schedule).toMatchObject({ enabled: false, version: 2 });
    expect(actions.at(-1)).toMatchObject({
      action: 'schedule.disable',
      version: 2,
      note: 'holiday',
    });
    const stale = await post('/schedules/p2/enable', { expectedVersion: 1 });
    expect(stale.status).toBe(409);
    expect((await fleet.getSchedule('p2'))?.enabled).toBe(false);
    const enabled = await post('/schedules/p2/enable', { expectedVersion: 2 });
    expect(enabled.body.schedule).toMatchObject({ enabled: true, version: 3 });
    expect(
      (await post('/schedules/p2/enable', { expectedVersion: 3, colour: 1 })).body.error,
    ).toMatchObject({ code: 'INVALID_OPTION', field: 'colour' });
    expect((await post('/schedules/p3/remove', { expectedVersion: 7 })).status).toBe(409);
    expect((await post('/schedules/p3/remove', {}, READ)).status).toBe(403);
    const removed = await post('/schedules/p3/remove', { expectedVersion: 1 });
    expect(removed).toMatchObject({ status: 200, body: { schedule: { id: 'p3', version: 1 } } });
    expect(actions.at(-1)).toMatchObject({ action: 'schedule.remove', job: 'schedule:p3' });
    expect((await get('/schedules/p3')).status).toBe(404);
    expect((await post('/schedules/never-was/remove', {})).status).toBe(404);
    expect((await post('/schedules/p2/explode', {})).status).toBe(404);
    expect(await ids()).toEqual(['acme/daily@1', 'p1@3', 'p2@3', 'p4@1']);
  });
});
