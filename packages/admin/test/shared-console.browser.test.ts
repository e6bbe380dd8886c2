import { createServer, type Server } from 'node:http';
import { type AddressInfo, connect, createServer as createTcpServer } from 'node:net';
import { cron, every, FleetClient, MemoryStore } from '@fleetcron/core';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type AdminActionRecord,
  type AdminHandlerOptions,
  createAdminHandler,
  toNodeListener,
} from '../src/index.js';
import { launchBrowser, until } from './browser.js';
import { execution, instanceRecord, registeredJob } from './fleet-fixture.js';

// Issue 30, item 7: a console shared with other teams, checked in real Chromium.

const TOKEN = 'shared-console-token-0123456789';
const LONG_NAME = `export-${'x'.repeat(505)}`; // 512 characters, no break opportunity
const SPOOFED = 'invoice-\u202Eexe.fdp'; // shows as "invoice-pdf.exe" when not neutralised
const LONG_ERROR = `Error: ${'y'.repeat(10_000)}`; // a 10 kB first line

let store: MemoryStore;
const actions: AdminActionRecord[] = [];
let browser: { context: BrowserContext; close(): Promise<void> };
const servers: Server[] = [];

function listen(server: Server): Promise<number> {
  servers.push(server);
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)),
  );
}

async function adminServer(options: Partial<AdminHandlerOptions> = {}): Promise<number> {
  const handler = createAdminHandler({
    fleet: new FleetClient({ store }),
    ...(options.authorize ? {} : { token: TOKEN }),
    refreshMs: 1000,
    onAction: (record) => actions.push(record),
    ...options,
  });
  return listen(createServer(toNodeListener(handler)));
}

async function signIn(origin: string): Promise<Page> {
  const page = await browser.context.newPage();
  await page.goto(`${origin}/`);
  await page.fill('#token', TOKEN);
  await page.click('button[type=submit]');
  await page.waitForSelector('#jobs');
  return page;
}

/** How far the page is wider than the viewport, px (0: nothing to scroll sideways). */
const overflow = (page: Page) =>
  page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);

beforeAll(async () => {
  store = new MemoryStore();
  const billing = registeredJob('billing', cron('0 3 * * *', { tz: 'Europe/Berlin' }));
  const billingElsewhere = registeredJob('billing', cron('0 4 * * *', { tz: 'Europe/Berlin' }));
  // stored straight through the Store, as an older instance (before core refused them) would
  const spoofed = registeredJob(SPOOFED, every(60_000));
  const long = registeredJob(LONG_NAME, every(60_000));
  await store.heartbeat(instanceRecord('i-1', [billing, spoofed, long]));
  await store.heartbeat(instanceRecord('i-2', [billing]));
  await store.heartbeat(instanceRecord('i-3', [billingElsewhere]));
  await store.record(
    execution('billing', Date.now() - 60_000, { status: 'failed', error: LONG_ERROR }),
  );
  await store.setPaused(LONG_NAME, true, { by: `ops-${'z'.repeat(190)}` });
  browser = await launchBrowser(['--host-resolver-rules=MAP attacker.test 127.0.0.1']);
}, 60_000);

afterAll(async () => {
  await browser?.close();
  for (const server of servers) {
    server.closeAllConnections?.();
    server.close();
  }
});

describe('the console shows stored text safely', () => {
  it('wraps a 512-character name and a 10 kB error line instead of widening the page', async () => {
    const origin = `http://127.0.0.1:${await adminServer()}`;
    const page = await signIn(origin);
    for (const width of [1280, 400]) {
      await page.setViewportSize({ width, height: 800 });
      await page.goto(`${origin}/#/`);
      await page.waitForSelector('#jobs');
      expect(await overflow(page), `jobs at ${width} px`).toBeLessThanOrEqual(0);
      await page.goto(`${origin}/#/jobs/${encodeURIComponent(LONG_NAME)}`);
      await page.waitForSelector('#history-empty');
      expect(await overflow(page), `long job at ${width} px`).toBeLessThanOrEqual(0);
      await page.goto(`${origin}/#/jobs/billing`);
      await page.waitForSelector('#history details');
      await page.click('#history summary');
      expect(await overflow(page), `10 kB error at ${width} px`).toBeLessThanOrEqual(0);
    }
    await page.close();
  });

  it('shows a bidi override in a name as a visible mark, isolated from the text around it', async () => {
    const origin = `http://127.0.0.1:${await adminServer()}`;
    const page = await signIn(origin);
    const link = page.locator(`#jobs a[href="#/jobs/${encodeURIComponent(SPOOFED)}"]`);
    const text = await link.textContent();
    expect(text).toBe('invoice-⟨U+202E⟩exe.fdp');
    expect(await page.evaluate(() => document.body.textContent?.includes('\u202E'))).toBe(false);
    expect(await link.locator('bdi').count()).toBe(1);
    await page.close();
  });

  it('answers a malformed #/jobs/%E0%A4%A link with an error and keeps polling', async () => {
    const origin = `http://127.0.0.1:${await adminServer()}`;
    const page = await signIn(origin);
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    let polls = 0;
    page.on('request', (request) => {
      if (request.url().endsWith('/api/fleet')) polls++;
    });
    await page.goto(`${origin}/#/jobs/%E0%A4%A`);
    await page.waitForSelector('#bad-link');
    expect(await page.locator('#bad-link').textContent()).toContain('Malformed link');
    const seen = polls;
    await until('two more polls after the malformed link', () => polls >= seen + 2, 10_000);
    expect(errors).toEqual([]);
    await page.click('#bad-link a[href="#/"]');
    await page.waitForSelector('#jobs');
    await page.close();
  });

  it('shows which instances define what when a job drifts', async () => {
    const origin = `http://127.0.0.1:${await adminServer()}`;
    const page = await signIn(origin);
    expect(await page.locator('#drift a[href="#/jobs/billing"]').count()).toBe(1);
    await page.goto(`${origin}/#/jobs/billing`);
    const rows = page.locator('#definitions tbody tr');
    await rows.first().waitFor();
    const text = await rows.allTextContents();
    expect(text).toHaveLength(2);
    expect(text[0]).toContain('0 3 * * *');
    expect(text[0]).toContain('2: i-1, i-2');
    expect(text[1]).toContain('0 4 * * *');
    expect(text[1]).toContain('1: i-3');
    await page.close();
  });
});

describe('operators', () => {
  it('can add a note to a pause; onAction receives it', async () => {
    const origin = `http://127.0.0.1:${await adminServer()}`;
    const page = await signIn(origin);
    await page.locator('#jobs tr[data-job="billing"] button[data-key="pause:billing"]').click();
    await page.fill('dialog.confirm #confirm-note', 'INC-42: upstream down');
    await page.click('dialog.confirm button[data-confirm]');
    await until('the pause recorded', () => actions.some((a) => a.action === 'pause'));
    expect(actions.find((a) => a.action === 'pause')).toMatchObject({
      job: 'billing',
      by: 'admin:token',
      note: 'INC-42: upstream down',
    });
    await store.setPaused('billing', false, { by: 'test' });
    await page.close();
  });

  it('after too many refused sign-ins, the sign-in form says why', async () => {
    const origin = `http://127.0.0.1:${await adminServer({ failedAuthLimit: { attempts: 2 } })}`;
    const page = await browser.context.newPage();
    await page.goto(`${origin}/`);
    for (const token of ['wrong-token-0123456789', 'wrong-token-9876543210', TOKEN]) {
      const form = await page.waitForSelector('form.login');
      await page.fill('#token', token);
      await page.click('button[type=submit]');
      // each answer replaces the form: wait for the new one
      await page.waitForFunction((old) => !old.isConnected, form);
    }
    await page.waitForSelector('form.login .warning');
    expect(await page.locator('form.login .warning').textContent()).toContain(
      'too many refused sign-ins',
    );
    await page.close();
  });
});

/**
 * A DNS rebinding, as the network would do it: `attacker.test` (mapped to 127.0.0.1 by
 * `--host-resolver-rules`) first reaches the attacker's server, which serves a page and closes
 * the connection; every later request to that name and port reaches the admin server. The
 * page then calls the admin API as its own origin. A TCP switch on one port plays the DNS answer
 * that changes.
 */
async function rebindingSwitch(adminPort: number): Promise<number> {
  let rebound = false;
  const attacker = createServer((_request, response) => {
    rebound = true; // the attacker's DNS now answers with the victim's address
    response.writeHead(200, { 'content-type': 'text/html', connection: 'close' });
    response.end(`<!doctype html><script>
      window.result = (async () => {
        const read = await fetch('/api/fleet');
        const pause = await fetch('/api/jobs/billing/pause', {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-fleetcron-request': '1' },
          body: '{}',
        });
        return { read: read.status, pause: pause.status, body: await pause.text() };
      })();
    </script>`);
  });
  const attackerPort = await listen(attacker);
  // Chromium may open a spare connection before it needs one: route each connection by when its
  // first request arrives, not by when it was opened, as a fresh DNS answer would.
  const tcp = createTcpServer((client) => {
    client.on('error', () => {});
    client.once('data', (first: Buffer) => {
      client.pause();
      const upstream = connect(rebound ? adminPort : attackerPort, '127.0.0.1');
      upstream.on('error', () => client.destroy());
      client.on('error', () => upstream.destroy());
      upstream.write(first);
      client.pipe(upstream).pipe(client);
      client.resume();
    });
  });
  servers.push(tcp as unknown as Server);
  return new Promise((resolve) =>
    tcp.listen(0, '127.0.0.1', () => resolve((tcp.address() as AddressInfo).port)),
  );
}

describe('DNS rebinding', () => {
  async function attack(options: Partial<AdminHandlerOptions>) {
    await store.setPaused('billing', false, { by: 'test' });
    // the README's trusted-network setup: anyone who reaches the server may write
    const adminPort = await adminServer({ authorize: () => 'write', ...options });
    const port = await rebindingSwitch(adminPort);
    const page = await browser.context.newPage();
    await page.goto(`http://attacker.test:${port}/`);
    const result = (await page.evaluate(
      () => (window as unknown as { result: unknown }).result,
    )) as {
      read: number;
      pause: number;
      body: string;
    };
    await page.close();
    return { ...result, paused: (await store.getJobState('billing')).paused };
  }

  it('works against a handler that answers any Host (the setup really rebinds)', async () => {
    const result = await attack({ allowedHosts: 'any' });
    expect(result).toMatchObject({ read: 200, pause: 200, paused: true });
  });

  it('is refused by default: 400 HOST_NOT_ALLOWED, nothing read, nothing paused', async () => {
    const result = await attack({});
    expect(result).toMatchObject({ read: 400, pause: 400, paused: false });
    expect(JSON.parse(result.body)).toMatchObject({ error: { code: 'HOST_NOT_ALLOWED' } });
  });
});
