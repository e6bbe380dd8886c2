import { FleetClient, MemoryStore } from '@fleetcron/core';
import { beforeEach, describe, expect, it } from 'vitest';
import { type AdminActionRecord, type AdminHandler, createAdminHandler } from '../src/index.js';
import { seedFleet } from './fleet-fixture.js';

const WRITE = 'write-token-0123456789';
const READ = 'read-token-0123456789';
const ORIGIN = 'http://admin.test';

let store: MemoryStore;
let handler: AdminHandler;
let actions: AdminActionRecord[];

function call(path: string, init: RequestInit & { token?: string } = {}): Promise<Response> {
  const headers = new Headers(init.headers);
  headers.set('authorization', `Bearer ${init.token ?? WRITE}`);
  return handler(new Request(`${ORIGIN}/admin${path}`, { ...init, headers }));
}

function post(path: string, body: unknown): Promise<Response> {
  return call(path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-fleetcron-request': 'test' },
    body: JSON.stringify(body),
  });
}

function make(fleet: ConstructorParameters<typeof FleetClient>[0]['store']): AdminHandler {
  return createAdminHandler({
    fleet: new FleetClient({ store: fleet }),
    basePath: '/admin',
    allowedHosts: ['admin.test'],
    tokens: [
      { token: WRITE, role: 'write', name: 'ops' },
      { token: READ, role: 'read', name: 'viewer' },
    ],
    onError: (error) => {
      throw error;
    },
    onAction: (record) => actions.push(record),
  });
}

beforeEach(async () => {
  actions = [];
  store = new MemoryStore();
  await seedFleet(store);
  handler = make(store);
});

describe('the audit log through the API', () => {
  it('stores who and the note of pause, resume, run and schedule writes; GET api/audit reads them', async () => {
    const [job] = (await store.instances())[0]!.jobs;
    const name = job!.name;
    expect((await post(`/api/jobs/${name}/pause`, { note: 'deploy 1.2' })).status).toBe(200);
    expect((await post(`/api/jobs/${name}/resume`, {})).status).toBe(200);
    const run = await (await post(`/api/jobs/${name}/run`, { note: 'rerun' })).json();
    const created = await post('/api/schedules', {
      ...{ id: 'acme', handler: 'report', trigger: { kind: 'every', ms: 60_000 } },
      note: 'new tenant',
    });
    expect(created.status).toBe(201);
    const disabled = await post('/api/schedules/acme/disable', { note: 'holiday' });
    expect(disabled.status).toBe(200);

    const page = await (await call('/api/audit', { token: READ })).json();
    expect(
      page.entries.map((e: Record<string, unknown>) => [e.action, e.by, e.note]),
      'newest first, admin:<token name>, the body note',
    ).toEqual([
      ['schedule.disable', 'admin:ops', 'holiday'],
      ['schedule.create', 'admin:ops', 'new tenant'],
      ['run', 'admin:ops', 'rerun'],
      ['resume', 'admin:ops', null],
      ['pause', 'admin:ops', 'deploy 1.2'],
    ]);
    expect(page.entries[2].requestId).toBe(run.request.id);
    expect(page.nextCursor).toBeNull();
    expect(
      actions.map((a) => [a.action, a.note ?? null]),
      'onAction still hears each mutation',
    ).toEqual([
      ['pause', 'deploy 1.2'],
      ['resume', null],
      ['run', 'rerun'],
      ['schedule.create', 'new tenant'],
      ['schedule.disable', 'holiday'],
    ]);

    const filtered = await (
      await call(`/api/audit?job=${encodeURIComponent(name)}&action=pause,resume&limit=1`)
    ).json();
    expect(filtered.entries.map((e: { action: string }) => e.action)).toEqual(['resume']);
    const next = await (
      await call(
        `/api/audit?job=${encodeURIComponent(name)}&action=pause,resume&limit=1&cursor=${filtered.nextCursor}`,
      )
    ).json();
    expect(next.entries.map((e: { action: string }) => e.action)).toEqual(['pause']);
  });

  it('answers 400 naming the field for a note over 1,000 characters or a bad query, and stores nothing', async () => {
    const [job] = (await store.instances())[0]!.jobs;
    const long = await post(`/api/jobs/${job!.name}/pause`, { note: 'x'.repeat(1_001) });
    expect(long.status).toBe(400);
    expect(await long.json()).toMatchObject({ error: { code: 'INVALID_OPTION', field: 'note' } });
    expect((await store.getJobState(job!.name)).paused).toBe(false);
    for (const [query, field] of [
      ['limit=0', 'limit'],
      ['before=soon', 'before'],
      ['cursor=nope', 'cursor'],
      ['action=PAUSE!', 'action[0]'],
    ]) {
      const response = await call(`/api/audit?${query}`);
      expect(response.status, query).toBe(400);
      expect(await response.json()).toMatchObject({ error: { code: 'INVALID_OPTION', field } });
    }
    expect((await (await call('/api/audit')).json()).entries).toEqual([]);
  });

  it('answers 501 AUDIT_NOT_KEPT for a store without an audit log', async () => {
    class NoAudit extends MemoryStore {}
    Object.defineProperty(NoAudit.prototype, 'listAudit', { value: undefined });
    const bare = new NoAudit();
    await seedFleet(bare);
    handler = make(bare);
    const response = await call('/api/audit');
    expect(response.status).toBe(501);
    expect(await response.json()).toMatchObject({ error: { code: 'AUDIT_NOT_KEPT' } });
  });
});
