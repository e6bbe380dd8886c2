import { FleetClient, MemoryStore } from '@fleetcron/core';
import { beforeEach, describe, expect, it } from 'vitest';
import {
  type AdminActionRecord,
  type AdminHandler,
  CONSOLE_CSP,
  createAdminHandler,
} from '../src/index.js';
import { seedFleet } from './fleet-fixture.js';

const WRITE = 'write-token-0123456789';
const READ = 'read-token-0123456789';
const ORIGIN = 'http://admin.test';

let store: MemoryStore;
let handler: AdminHandler;
let actions: AdminActionRecord[];

function call(path: string, init: RequestInit & { token?: string | null } = {}): Promise<Response> {
  const headers = new Headers(init.headers);
  const token = init.token === undefined ? WRITE : init.token;
  if (token) headers.set('authorization', `Bearer ${token}`);
  return handler(new Request(`${ORIGIN}/admin${path}`, { ...init, headers }));
}

function mutate(
  path: string,
  token: string | null = WRITE,
  extra: Record<string, string> = {},
): Promise<Response> {
  return call(path, {
    method: 'POST',
    token,
    headers: { 'content-type': 'application/json', 'x-fleetcron-request': 'test', ...extra },
    body: '{}',
  });
}

beforeEach(async () => {
  actions = [];
  store = new MemoryStore();
  await seedFleet(store);
  handler = createAdminHandler({
    fleet: new FleetClient({ store }),
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
});

describe('authentication', () => {
  it('answers 401 with a JSON error and WWW-Authenticate without a token or with a wrong one', async () => {
    for (const token of [null, 'wrong-token-0123456789']) {
      const response = await call('/api/fleet', { token });
      expect(response.status).toBe(401);
      expect(response.headers.get('www-authenticate')).toBe('Bearer realm="fleetcron"');
      expect(await response.json()).toMatchObject({ error: { code: 'UNAUTHENTICATED' } });
    }
  });

  it('tells the console who is signed in', async () => {
    expect(await (await call('/api/me', { token: READ })).json()).toEqual({
      role: 'read',
      name: 'viewer',
    });
    expect(await (await call('/api/me')).json()).toEqual({ role: 'write', name: 'ops' });
  });

  it('refuses to start without any way to authenticate, naming the field', () => {
    expect(() => createAdminHandler({ fleet: new FleetClient({ store }) })).toThrow(
      expect.objectContaining({ code: 'INVALID_OPTION', field: 'token' }),
    );
    expect(() => createAdminHandler({ fleet: new FleetClient({ store }), token: 'short' })).toThrow(
      expect.objectContaining({ field: 'tokens[0].token' }),
    );
  });

  it('answers 500 INTERNAL without details when the authorize hook throws, and reports it', async () => {
    const errors: unknown[] = [];
    handler = createAdminHandler({
      fleet: new FleetClient({ store }),
      basePath: '/admin',
      allowedHosts: ['admin.test'],
      authorize: () => {
        throw new Error('session store down: secret detail');
      },
      onError: (error) => errors.push(error),
    });
    const response = await call('/api/fleet', { token: null });
    expect(response.status).toBe(500);
    const body = JSON.stringify(await response.json());
    expect(body).toContain('INTERNAL');
    expect(body).not.toContain('secret detail');
    expect(errors).toHaveLength(1);
  });

  it('uses the authorize hook for requests without a known token', async () => {
    handler = createAdminHandler({
      fleet: new FleetClient({ store }),
      basePath: '/admin',
      allowedHosts: ['admin.test'],
      authorize: (request) =>
        request.headers.get('x-user') === 'alice' ? { role: 'write', name: 'alice' } : false,
    });
    expect((await call('/api/fleet', { token: null })).status).toBe(401);
    const ok = await mutate('/api/jobs/billing/pause', null, { 'x-user': 'alice' });
    expect(ok.status).toBe(200);
    expect((await store.getJobState('billing')).pausedBy).toBe('admin:alice');
  });
});

describe('read API', () => {
  it('lists instances and jobs with next fires in UTC and the job zone', async () => {
    const instances = (await (await call('/api/instances', { token: READ })).json()) as {
      instances: Array<{ instanceId: string }>;
    };
    expect(instances.instances.map((i) => i.instanceId)).toEqual(['i-1']);
    const body = (await (await call('/api/jobs', { token: READ })).json()) as {
      jobs: Array<{
        name: string;
        nextFires: Array<{ utc: string; local: string; zone: string }>;
        lastStatus: string;
      }>;
    };
    expect(body.jobs.map((j) => j.name)).toEqual(['billing', 'cleanup']);
    const billing = body.jobs[0];
    expect(billing?.nextFires).toHaveLength(5);
    expect(billing?.nextFires[0]?.zone).toBe('Europe/Berlin');
    expect(billing?.nextFires[0]?.local).toMatch(/ 03:00:00 \+0[12]:00$/);
    expect(billing?.lastStatus).toBe('succeeded');
  });

  it('pages history with a cursor and filters by status', async () => {
    const first = (await (await call('/api/jobs/billing/history?limit=10')).json()) as {
      executions: Array<{ startedAt: number; id: string }>;
      nextCursor: string | null;
    };
    expect(first.executions).toHaveLength(10);
    const seen = new Set(first.executions.map((e) => e.id));
    let cursor = first.nextCursor;
    while (cursor) {
      const page = (await (
        await call(`/api/jobs/billing/history?limit=10&cursor=${encodeURIComponent(cursor)}`)
      ).json()) as typeof first;
      for (const e of page.executions) seen.add(e.id);
      cursor = page.nextCursor;
    }
    expect(seen.size).toBe(25);
    const failed = (await (await call('/api/jobs/billing/history?status=failed')).json()) as {
      executions: Array<{ status: string; error: string }>;
    };
    expect(failed.executions).toHaveLength(5);
    expect(
      failed.executions.every((e) => e.status === 'failed' && e.error.startsWith('Error: boom')),
    ).toBe(true);
  });

  it('answers typed JSON errors: unknown job 404, bad limit or status 400 naming the field', async () => {
    const unknown = await call('/api/jobs/nope/history');
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({ error: { code: 'UNKNOWN_JOB', field: 'job' } });
    const limit = await call('/api/jobs/billing/history?limit=0');
    expect(limit.status).toBe(400);
    expect(await limit.json()).toMatchObject({ error: { code: 'INVALID_OPTION', field: 'limit' } });
    const status = await call('/api/jobs/billing/history?status=exploded');
    expect(status.status).toBe(400);
    expect(await status.json()).toMatchObject({
      error: { code: 'INVALID_OPTION', field: 'status' },
    });
    const cursor = await call('/api/jobs/billing/history?cursor=garbage');
    expect(await cursor.json()).toMatchObject({
      error: { code: 'INVALID_OPTION', field: 'cursor' },
    });
    expect((await call('/api/nothing')).status).toBe(404);
  });
});

describe('mutations', () => {
  it('pause and resume record who asked; run now stores a run request', async () => {
    const paused = await mutate('/api/jobs/billing/pause');
    expect(paused.status).toBe(200);
    expect(await store.getJobState('billing')).toMatchObject({
      paused: true,
      pausedBy: 'admin:ops',
    });
    expect(await mutate('/api/jobs/billing/resume')).toHaveProperty('status', 200);
    expect((await store.getJobState('billing')).paused).toBe(false);
    const run = await mutate('/api/jobs/cleanup/run');
    expect(run.status).toBe(202);
    const taken = await store.takeRunRequests(['cleanup'], 'i-1');
    expect(taken.map((r) => r.requestedBy)).toEqual(['admin:ops']);
    expect(actions.map((a) => [a.action, a.job, a.by])).toEqual([
      ['pause', 'billing', 'admin:ops'],
      ['resume', 'billing', 'admin:ops'],
      ['run', 'cleanup', 'admin:ops'],
    ]);
    expect(actions[2]?.requestId).toBe(taken[0]?.id);
  });

  it('refuses mutations for the read role with 403 and changes nothing', async () => {
    const response = await mutate('/api/jobs/billing/pause', READ);
    expect(response.status).toBe(403);
    expect(await response.json()).toMatchObject({ error: { code: 'FORBIDDEN' } });
    expect((await store.getJobState('billing')).paused).toBe(false);
  });

  it('refuses what a cross-site form or script could send', async () => {
    const form = await call('/api/jobs/billing/pause', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'a=1',
    });
    const noHeader = await call('/api/jobs/billing/pause', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    const otherOrigin = await mutate('/api/jobs/billing/pause', WRITE, {
      origin: 'http://evil.test',
    });
    const crossSite = await mutate('/api/jobs/billing/pause', WRITE, {
      'sec-fetch-site': 'cross-site',
    });
    for (const response of [form, noHeader, otherOrigin, crossSite]) {
      expect(response.status).toBe(403);
      expect(await response.json()).toMatchObject({ error: { code: 'CROSS_SITE_REFUSED' } });
    }
    expect((await store.getJobState('billing')).paused).toBe(false);
    expect(actions).toEqual([]);
    expect((await mutate('/api/jobs/billing/pause', WRITE, { origin: ORIGIN })).status).toBe(200);
  });

  it('answers 404 UNKNOWN_JOB for a job the fleet does not know', async () => {
    for (const action of ['pause', 'resume', 'run']) {
      const response = await mutate(`/api/jobs/ghost/${action}`);
      expect(response.status).toBe(404);
      expect(await response.json()).toMatchObject({ error: { code: 'UNKNOWN_JOB' } });
    }
  });
});

describe('stored schedules on a store without them', () => {
  it('answers the schedule routes 400 INVALID_OPTION naming the store, and the rest still works', async () => {
    // A third-party Store written before stored schedules: every other method, none of these.
    const legacy = new Proxy(store, {
      get: (target, key, receiver) =>
        typeof key === 'string' && /Schedules?$/.test(key)
          ? undefined
          : Reflect.get(target, key, receiver),
    });
    handler = createAdminHandler({ fleet: new FleetClient({ store: legacy }), token: WRITE });
    const call = (path: string, method = 'GET') =>
      handler(
        new Request(`http://localhost${path}`, {
          method,
          headers: {
            authorization: `Bearer ${WRITE}`,
            'content-type': 'application/json',
            'x-fleetcron-request': 'test',
          },
          body: method === 'POST' ? '{}' : undefined,
        }),
      );
    for (const [path, method] of [
      ['/api/schedules', 'GET'],
      ['/api/schedules/x', 'GET'],
      ['/api/schedules', 'POST'],
      ['/api/schedules/x/disable', 'POST'],
    ] as const) {
      const response = await call(path, method);
      expect(response.status).toBe(400);
      expect(await response.json()).toMatchObject({
        error: { code: 'INVALID_OPTION', field: 'store' },
      });
    }
    expect((await call('/api/jobs')).status).toBe(200);
  });
});

describe('console', () => {
  it('serves the page with a strict CSP and its script and stylesheet from the handler', async () => {
    const page = await call('/', { token: null });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toBe(CONSOLE_CSP);
    expect(CONSOLE_CSP).toContain("script-src 'self'");
    expect(CONSOLE_CSP).not.toContain('unsafe-inline');
    const html = await page.text();
    expect(html).not.toMatch(/<script>|<script [^>]*>[^<]|style=/);
    expect(html).not.toMatch(/https?:\/\//);
    const script = html.match(/src="([^"]+)"/)?.[1] as string;
    const js = await handler(new Request(`${ORIGIN}${script}`));
    expect(js.headers.get('content-type')).toContain('text/javascript');
    const source = await js.text();
    expect(() => new Function(source)).not.toThrow();
    expect(source).not.toMatch(/https?:\/\/(?!www\.w3)/);
    const etag = js.headers.get('etag') as string;
    const again = await handler(
      new Request(`${ORIGIN}${script}`, { headers: { 'if-none-match': etag } }),
    );
    expect(again.status).toBe(304);
    const css = await call('/assets/console.css', { token: null });
    expect(css.headers.get('content-type')).toContain('text/css');
  });

  it('answers 404 outside its base path', async () => {
    const response = await handler(new Request(`${ORIGIN}/elsewhere/api/fleet`));
    expect(response.status).toBe(404);
  });
});
