import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { connect } from 'node:net';
import { FakeClock, FleetClient, MemoryStore } from '@fleetcron/core';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  type AdminActionRecord,
  type AdminHandlerOptions,
  createAdminHandler,
  toNodeListener,
} from '../src/index.js';
import { seedFleet } from './fleet-fixture.js';

// What an outside audit of a console shared with other teams tried (issue 30, item 7).

const ALICE = 'alice-token-0123456789';
const BOB = 'bob-token-0123456789ab';

let store: MemoryStore;
let actions: AdminActionRecord[];

beforeEach(async () => {
  store = new MemoryStore();
  actions = [];
  await seedFleet(store);
});

function make(options: Partial<AdminHandlerOptions> = {}) {
  return createAdminHandler({
    fleet: new FleetClient({ store }),
    tokens: [
      { token: ALICE, name: 'alice' },
      { token: BOB, name: 'bob' },
    ],
    onAction: (record) => actions.push(record),
    onError: (error) => {
      throw error;
    },
    ...options,
  });
}

const get = (url: string, token: string | null = ALICE, headers: Record<string, string> = {}) =>
  new Request(url, { headers: token ? { authorization: `Bearer ${token}`, ...headers } : headers });

const post = (url: string, body: unknown, headers: Record<string, string> = {}) =>
  new Request(url, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${ALICE}`,
      'content-type': 'application/json',
      'x-fleetcron-request': 'test',
      ...headers,
    },
    body: JSON.stringify(body),
  });

describe('allowed hosts (DNS rebinding)', () => {
  it('refuses a Host it was not told about with 400 HOST_NOT_ALLOWED, before authentication', async () => {
    const handler = make();
    for (const url of [
      'http://attacker.example:8080/api/fleet',
      'http://attacker.example:8080/',
      'http://localhost.attacker.example/api/me',
    ]) {
      const response = await handler(get(url));
      expect(response.status).toBe(400);
      expect(await response.json()).toMatchObject({
        error: { code: 'HOST_NOT_ALLOWED', field: 'allowedHosts' },
      });
    }
    const pause = await handler(post('http://attacker.example:8080/api/jobs/billing/pause', {}));
    expect(pause.status).toBe(400);
    expect((await store.getJobState('billing')).paused).toBe(false);
  });

  it('answers loopback names and IP literals by default, and the names it is given', async () => {
    const handler = make({ allowedHosts: ['ops.example.com', '.corp.example', 'fleet_admin'] });
    for (const url of [
      'http://localhost:8080/api/me',
      'http://app.localhost/api/me',
      'http://127.0.0.1:8080/api/me',
      'http://10.1.2.3/api/me',
      'http://[::1]:8080/api/me',
      'https://ops.example.com/api/me',
      'https://OPS.example.com./api/me',
      'https://a.b.corp.example/api/me',
      'https://corp.example/api/me',
      'http://fleet_admin:8080/api/me', // a compose service name
    ]) {
      expect((await handler(get(url))).status, url).toBe(200);
    }
    expect((await handler(get('https://ops.example.com.evil/api/me'))).status).toBe(400);
    expect((await handler(get('https://evilcorp.example/api/me'))).status).toBe(400);
    expect((await make({ allowedHosts: 'any' })(get('http://anything.test/api/me'))).status).toBe(
      200,
    );
  });

  it('checks its options at construction, naming the field', () => {
    expect(() => make({ allowedHosts: ['https://ops.example.com'] })).toThrow(
      expect.objectContaining({ code: 'INVALID_OPTION', field: 'allowedHosts[0]' }),
    );
    expect(() => make({ allowedHosts: 'ops.example.com' as never })).toThrow(
      expect.objectContaining({ field: 'allowedHosts' }),
    );
    for (const origin of ['ops.example.com', 'https://ops.example.com/admin', 'ftp://x.test']) {
      expect(() => make({ publicOrigin: origin })).toThrow(
        expect.objectContaining({ field: 'publicOrigin' }),
      );
    }
  });

  it('behind a proxy that rewrites Host, accepts mutations from publicOrigin only', async () => {
    const handler = make({ publicOrigin: 'https://ops.example.com' });
    // nginx's default: Host is the upstream address, Origin the name people typed
    const upstream = 'http://127.0.0.1:8080/api/jobs/billing/pause';
    const refused = await handler(post(upstream, {}, { origin: 'https://evil.example' }));
    expect(refused.status).toBe(403);
    const ok = await handler(post(upstream, {}, { origin: 'https://ops.example.com' }));
    expect(ok.status).toBe(200);
    // a proxy that keeps Host: the public host is allowed without listing it again
    expect((await handler(get('https://ops.example.com/api/me'))).status).toBe(200);
    // without publicOrigin, the same proxied request fails as before
    const plain = await make()(post(upstream, {}, { origin: 'https://ops.example.com' }));
    expect(await plain.json()).toMatchObject({ error: { code: 'CROSS_SITE_REFUSED' } });
  });
});

describe('named tokens', () => {
  it('records each token holder by name with an optional note', async () => {
    const handler = make();
    await handler(
      post('http://localhost/api/jobs/billing/pause', { note: 'INC-42 upstream down' }),
    );
    const bob = post(
      'http://localhost/api/jobs/billing/resume',
      {},
      {
        authorization: `Bearer ${BOB}`,
      },
    );
    await handler(bob);
    expect(actions.map((a) => [a.by, a.action, a.note])).toEqual([
      ['admin:alice', 'pause', 'INC-42 upstream down'],
      ['admin:bob', 'resume', undefined],
    ]);
  });

  it('refuses duplicate, over-long and bidi-carrying names, naming the field', () => {
    const tokens = (name: string) => ({ tokens: [{ token: ALICE, name }] });
    expect(() =>
      make({
        tokens: [
          { token: ALICE, name: 'ops' },
          { token: BOB, name: 'ops' },
        ],
      }),
    ).toThrow(expect.objectContaining({ field: 'tokens[1].name' }));
    expect(() => make(tokens('x'.repeat(65)))).toThrow(
      expect.objectContaining({ field: 'tokens[0].name' }),
    );
    expect(() => make(tokens('ops\u202Etoor'))).toThrow(
      expect.objectContaining({ field: 'tokens[0].name' }),
    );
  });

  it('gives unnamed tokens distinct names', async () => {
    const handler = make({ tokens: [{ token: ALICE }, { token: BOB }] });
    const me = async (token: string) =>
      ((await (await handler(get('http://localhost/api/me', token))).json()) as { name: string })
        .name;
    expect([await me(ALICE), await me(BOB)]).toEqual(['token-1', 'token-2']);
  });
});

describe('bounded input', () => {
  it('refuses a note over 1000 characters with INVALID_OPTION naming note', async () => {
    const handler = make();
    const response = await handler(
      post('http://localhost/api/jobs/billing/pause', { note: 'n'.repeat(1001) }),
    );
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({
      error: { code: 'INVALID_OPTION', field: 'note' },
    });
    expect((await store.getJobState('billing')).paused).toBe(false);
  });

  it('refuses an authorize hook name over the bound, naming the hook', async () => {
    const handler = make({
      tokens: [],
      authorize: () => ({ role: 'write', name: 'x'.repeat(5000) }),
    });
    const response = await handler(get('http://localhost/api/me', null));
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ error: { field: 'authorize' } });
  });
});

describe('refused sign-ins are rate limited per address', () => {
  it('answers 429 after the limit, to the right token too, until the window ends', async () => {
    const clock = new FakeClock();
    const handler = make({ clock, failedAuthLimit: { attempts: 3, windowMs: 60_000 } });
    const from = (address: string, token: string) =>
      handler(get('http://localhost/api/me', token), { address });
    for (let i = 0; i < 3; i++) expect((await from('10.0.0.9', `wrong-${i}`)).status).toBe(401);
    const blocked = await from('10.0.0.9', ALICE);
    expect(blocked.status).toBe(429);
    expect(blocked.headers.get('retry-after')).toBe('60');
    expect(await blocked.json()).toMatchObject({ error: { code: 'TOO_MANY_FAILED_SIGN_INS' } });
    expect((await from('10.0.0.10', ALICE)).status).toBe(200); // another address
    await clock.advance(60_000);
    expect((await from('10.0.0.9', ALICE)).status).toBe(200);
    // without an address there is no key: no shared count anyone could use to lock all out
    for (let i = 0; i < 5; i++) {
      expect((await handler(get('http://localhost/api/me', 'wrong'))).status).toBe(401);
    }
    expect((await handler(get('http://localhost/api/me', ALICE))).status).toBe(200);
  });

  it('counts by the address clientAddress reads (behind a proxy: the header it sets)', async () => {
    const handler = make({
      failedAuthLimit: { attempts: 1 },
      clientAddress: (request, peer) => request.headers.get('x-real-ip') ?? peer,
    });
    const via = (realIp: string, token: string) =>
      handler(get('http://localhost/api/me', token, { 'x-real-ip': realIp }), {
        address: '10.0.0.1', // the proxy
      });
    expect((await via('203.0.113.7', 'wrong')).status).toBe(401);
    expect((await via('203.0.113.7', ALICE)).status).toBe(429);
    expect((await via('198.51.100.2', ALICE)).status).toBe(200); // another client, same proxy
    expect(() => make({ clientAddress: 'x-real-ip' as never })).toThrow(
      expect.objectContaining({ field: 'clientAddress' }),
    );
  });

  it('keeps at most maxAddresses windows', async () => {
    const clock = new FakeClock();
    const handler = make({
      clock,
      failedAuthLimit: { attempts: 1, windowMs: 60_000, maxAddresses: 2 },
    });
    const from = (address: string, token: string) =>
      handler(get('http://localhost/api/me', token), { address });
    await from('a', 'wrong');
    expect((await from('a', ALICE)).status).toBe(429);
    await from('b', 'wrong');
    await from('c', 'wrong'); // forgets a, the oldest
    expect((await from('a', ALICE)).status).toBe(200);
    expect((await from('c', ALICE)).status).toBe(429);
  });
});

describe('over node:http', () => {
  let server: Server;
  let port: number;

  beforeEach(async () => {
    server = createServer(toNodeListener(make()));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });

  afterEach(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  /** Sends raw HTTP/1.1 and resolves the status line and body of the answer. */
  function raw(request: string): Promise<{ status: number; body: string }> {
    return new Promise((resolve, reject) => {
      const socket = connect(port, '127.0.0.1');
      let data = '';
      socket.setEncoding('utf8');
      socket.on('data', (chunk: string) => {
        data += chunk;
      });
      socket.on('error', reject);
      socket.on('end', () => {
        const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(data)?.[1]);
        resolve({ status, body: data.slice(data.indexOf('\r\n\r\n') + 4) });
      });
      socket.write(request);
    });
  }

  it('answers TRACE 405 and a malformed Host 400, not 500', async () => {
    const trace = await raw(
      'TRACE /api/fleet HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n',
    );
    expect(trace.status).toBe(405);
    expect(trace.body).toContain('METHOD_NOT_ALLOWED');
    for (const host of ['a b', '[::1', 'user@evil.test', 'x/y']) {
      const answer = await raw(
        `GET /api/me HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`,
      );
      expect(answer.status, host).toBe(400);
      expect(answer.body).toContain('INVALID_HOST');
    }
  });

  it('takes the host from Host, never from an absolute or //-target', async () => {
    const absolute = await raw(
      'GET http://127.0.0.1/api/me HTTP/1.1\r\nHost: attacker.example\r\nConnection: close\r\n\r\n',
    );
    expect(absolute.status).toBe(400);
    expect(absolute.body).toContain('HOST_NOT_ALLOWED');
    const slashes = await raw(
      `GET //attacker.example/api/me HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${ALICE}\r\nConnection: close\r\n\r\n`,
    );
    expect(slashes.status).toBe(404);
  });

  it('limits refused sign-ins by the peer address', async () => {
    const me = (token: string) =>
      fetch(`http://127.0.0.1:${port}/api/me`, { headers: { authorization: `Bearer ${token}` } });
    for (let i = 0; i < 10; i++) expect((await me(`wrong-token-${i}`)).status).toBe(401);
    expect((await me(ALICE)).status).toBe(429);
  });
});
