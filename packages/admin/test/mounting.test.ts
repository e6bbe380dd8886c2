import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { FleetClient, MemoryStore } from '@fleetcron/core';
import { type HttpBindings, serve } from '@hono/node-server';
import express from 'express';
import Fastify from 'fastify';
import { Hono } from 'hono';
import { afterEach, describe, expect, it } from 'vitest';
import { createAdminHandler, toNodeListener } from '../src/index.js';
import { seedFleet } from './fleet-fixture.js';

const TOKEN = 'mount-token-0123456789';

async function adminOver(store: MemoryStore) {
  await seedFleet(store);
  return createAdminHandler({
    fleet: new FleetClient({ store }),
    token: TOKEN,
    basePath: '/admin',
  });
}

const closers: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

function listen(server: Server): Promise<string> {
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      closers.push(() => new Promise((done) => server.close(done)));
      resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    });
  });
}

/** What every mounting must do: page, read API with auth, a recorded mutation, refusals. */
async function exercise(origin: string, store: MemoryStore): Promise<void> {
  const auth = { authorization: `Bearer ${TOKEN}` };
  const page = await fetch(`${origin}/admin/`);
  expect(page.status).toBe(200);
  expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");
  expect(await page.text()).toContain('src="/admin/assets/console.js');
  expect((await fetch(`${origin}/admin/assets/console.js`)).status).toBe(200);
  expect((await fetch(`${origin}/admin/api/fleet`)).status).toBe(401);
  const jobs = (await (await fetch(`${origin}/admin/api/jobs`, { headers: auth })).json()) as {
    jobs: Array<{ name: string }>;
  };
  expect(jobs.jobs.map((j) => j.name)).toEqual(['billing', 'cleanup']);
  const form = await fetch(`${origin}/admin/api/jobs/billing/pause`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/x-www-form-urlencoded' },
    body: 'x=1',
  });
  expect(form.status).toBe(403);
  const pause = await fetch(`${origin}/admin/api/jobs/billing/pause`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json', 'x-fleetcron-request': '1' },
    body: '{}',
  });
  expect(pause.status).toBe(200);
  expect(await store.getJobState('billing')).toMatchObject({
    paused: true,
    pausedBy: 'admin:token',
  });
  // the peer address reaches the handler: ten refused sign-ins (the one above and nine), then 429
  // even for the right token
  for (let i = 0; i < 9; i++) {
    const wrong = { authorization: `Bearer wrong-token-${i}-0123456789` };
    expect((await fetch(`${origin}/admin/api/me`, { headers: wrong })).status).toBe(401);
  }
  expect((await fetch(`${origin}/admin/api/me`, { headers: auth })).status).toBe(429);
}

describe('mounting at /admin', () => {
  it('node:http', async () => {
    const store = new MemoryStore();
    const admin = toNodeListener(await adminOver(store));
    const server = createServer((req, res) => {
      if (req.url?.startsWith('/admin')) return admin(req, res);
      res.statusCode = 404;
      res.end();
    });
    await exercise(await listen(server), store);
  });

  it('Express (behind express.json(), which reads the body first)', async () => {
    const store = new MemoryStore();
    const app = express();
    app.use(express.json());
    app.use('/admin', toNodeListener(await adminOver(store)));
    app.get('/', (_req, res) => {
      res.send('app');
    });
    await exercise(await listen(createServer(app)), store);
  });

  it('Fastify', async () => {
    const store = new MemoryStore();
    const admin = toNodeListener(await adminOver(store));
    const app = Fastify();
    app.addHook('onRequest', (request, reply, done) => {
      if (!request.url.startsWith('/admin')) return done();
      reply.hijack();
      admin(request.raw, reply.raw);
    });
    app.get('/', async () => 'app');
    const origin = await app.listen({ port: 0, host: '127.0.0.1' });
    closers.push(() => app.close());
    await exercise(origin, store);
  });

  it('Hono', async () => {
    const store = new MemoryStore();
    const admin = await adminOver(store);
    const app = new Hono<{ Bindings: HttpBindings }>();
    app.all('/admin/*', (c) => admin(c.req.raw, { address: c.env.incoming.socket.remoteAddress }));
    app.get('/', (c) => c.text('app'));
    const origin = await new Promise<string>((resolve) => {
      const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info) =>
        resolve(`http://127.0.0.1:${info.port}`),
      );
      closers.push(() => new Promise((done) => server.close(done)));
    });
    await exercise(origin, store);
  });
});
