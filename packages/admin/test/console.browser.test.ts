import { copyFileSync, mkdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { cron, FleetClient, MemoryStore, type RegisteredJob } from '@fleetcron/core';
import { definitionHash } from '@fleetcron/core/backend';
import type {} from '@fleetcron/testkit';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createAdminHandler, toNodeListener } from '../src/index.js';
import { launchBrowser, until } from './browser.js';
import { type PgFleet, startPgFleet } from './pg-fleet.js';

const WRITE = 'e2e-write-token-0123456789';
const READ = 'e2e-read-token-0123456789';
const SESSION = 'e2e-session-0123456789';
const SCREENSHOT = fileURLToPath(new URL('../.reports/console.png', import.meta.url));
const DOCS_IMAGE = fileURLToPath(new URL('../docs/console.png', import.meta.url));

let fleet: PgFleet;
let admin: Server;
let origin: string;
let browser: { context: BrowserContext; close(): Promise<void> };

function listen(server: Server): Promise<string> {
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`),
    ),
  );
}

async function signIn(token: string): Promise<Page> {
  const page = await browser.context.newPage();
  await page.goto(`${origin}/admin/`);
  await page.fill('#token', token);
  await page.click('button[type=submit]');
  await page.waitForSelector('#jobs');
  return page;
}

const row = (page: Page, job: string) => page.locator(`#jobs tr[data-job="${job}"]`);

async function confirmDialog(page: Page): Promise<void> {
  const dialog = page.locator('dialog.confirm');
  await dialog.waitFor();
  await dialog.locator('button[data-confirm]').click();
}

beforeAll(async () => {
  const url = inject('fleetcronPostgresUrl');
  if (!url)
    throw new Error('no shared PostgreSQL: vitest.config.ts must use the testkit global setup');
  fleet = await startPgFleet(url);
  const handler = createAdminHandler({
    fleet: new FleetClient({ store: fleet.store }),
    basePath: '/admin',
    refreshMs: 1000,
    tokens: [
      { token: WRITE, role: 'write', name: 'ops' },
      { token: READ, role: 'read', name: 'viewer' },
    ],
    // A session cookie, as an app's login would set: a cross-site form carries it along.
    authorize: (request) =>
      (request.headers.get('cookie') ?? '').includes(`fc_session=${SESSION}`)
        ? { role: 'write', name: 'cookie-user' }
        : false,
  });
  admin = createServer(toNodeListener(handler));
  origin = await listen(admin);
  browser = await launchBrowser();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  admin?.closeAllConnections();
  await new Promise((resolve) => admin?.close(resolve));
  await fleet?.stop();
});

describe('the console in Chromium over a fleet of three Schedulers on PostgreSQL', {
  timeout: 60_000,
}, () => {
  it('without a token: the API answers 401 and the page asks to sign in', async () => {
    expect((await fetch(`${origin}/admin/api/fleet`)).status).toBe(401);
    const page = await browser.context.newPage();
    const me = page.waitForResponse((r) => r.url().endsWith('/admin/api/me'));
    await page.goto(`${origin}/admin/`);
    expect((await me).status()).toBe(401);
    await page.locator('form.login #token').waitFor();
    expect(await page.locator('#jobs').count()).toBe(0);
    await page.close();
  });

  it('shows every job with its next fire, and failed runs with their error', async () => {
    const page = await browser.context.newPage();
    const requested: string[] = [];
    const refused: string[] = [];
    page.on('request', (request) => requested.push(request.url()));
    page.on('console', (message) => {
      if (/Content Security Policy|Refused to/i.test(message.text())) refused.push(message.text());
    });
    await page.goto(`${origin}/admin/`);
    await page.fill('#token', WRITE);
    await page.click('button[type=submit]');
    await page.waitForSelector('#jobs');
    for (const job of fleet.jobs) {
      const next = row(page, job).locator('td[data-label="Next fire"] time');
      await next.waitFor();
      expect(await next.getAttribute('datetime')).toMatch(/^\d{4}-\d\d-\d\dT/);
    }
    expect(
      await row(page, 'nightly-report').locator('td[data-label="Next fire"]').textContent(),
    ).toContain('03:00:00');
    await until(
      'a failed run of flaky',
      async () => (await row(page, 'flaky').locator('.badge-failed').count()) > 0,
    );
    await page.click('a[href="#/jobs/flaky"]');
    await page.locator('#history tr[data-status="failed"]').first().waitFor();
    expect(
      await page.locator('#history tr[data-status="failed"] details summary').first().textContent(),
    ).toContain('payment provider answered 503');
    // Nothing loaded from outside the handler, nothing blocked by the CSP.
    expect(requested.length).toBeGreaterThan(3);
    const outside = requested.filter((url) => !url.startsWith(`${origin}/admin/`));
    expect(outside.filter((url) => !url.startsWith('data:'))).toEqual([]);
    expect(refused).toEqual([]);
    await page.close();
  });

  it('run now runs the job once on the fleet and its history page shows the run', async () => {
    const page = await signIn(WRITE);
    const before = fleet.ledger.filter((e) => e.job === 'nightly-report').length;
    expect(before).toBe(0);
    await row(page, 'nightly-report').getByRole('button', { name: 'Run now' }).click();
    await confirmDialog(page);
    await page.locator('#notice.notice-ok').waitFor();
    const finished = await until(
      'the manual run of nightly-report in history',
      async () => {
        const history = await fleet.store.history('nightly-report', {});
        return history.executions.find(
          (e) => e.requestedBy === 'admin:ops' && e.finishedAt !== null,
        );
      },
      20_000,
    );
    expect(finished?.status).toBe('succeeded');
    expect(fleet.ledger.filter((e) => e.job === 'nightly-report')).toHaveLength(1);
    await page.click('a[href="#/jobs/nightly-report"]');
    const runRow = page.locator('#history tr[data-status="succeeded"]', {
      hasText: 'manual, by admin:ops',
    });
    await runRow.waitFor();
    expect(await page.locator('#history tbody tr').count()).toBe(1);
    await page.close();
  });

  it('run now with JSON data: a field error for bad data, then the request followed to its run in history', async () => {
    const page = await signIn(WRITE);
    const runs = () => fleet.ledger.filter((e) => e.job === 'nightly-report');
    const before = runs().length;
    await row(page, 'nightly-report').getByRole('button', { name: 'Run now' }).click();
    const dialog = page.locator('dialog.confirm');
    await dialog.waitFor();
    const field = dialog.locator('#confirm-data');
    const fieldError = dialog.locator('#confirm-data-error');
    await field.fill('{"month": 2026-11}');
    await dialog.locator('button[data-confirm]').click();
    await until('the JSON error on the data field', async () =>
      /Data must be JSON/.test((await fieldError.textContent()) ?? ''),
    );
    expect(await field.getAttribute('aria-invalid')).toBe('true');
    // valid JSON the API refuses (over 64 KiB): its typed error, on the same field
    await field.fill(JSON.stringify('x'.repeat(65 * 1024)));
    await dialog.locator('button[data-confirm]').click();
    await until('the API error on the data field', async () =>
      /64 KiB|bytes/.test((await fieldError.textContent()) ?? ''),
    );
    expect(runs().length, 'refused data requests nothing').toBe(before);
    await field.fill('{"month": "2026-11"}');
    await dialog.locator('button[data-confirm]').click();
    await dialog.waitFor({ state: 'detached' });
    const panel = page.locator('#run-request');
    await until(
      'the request decided and its run ended',
      async () => (await panel.getAttribute('data-state')) === 'done',
      20_000,
    );
    expect(await panel.locator('.request-state').textContent()).toMatch(
      /^Decided as the fire of .+ by e2e-[123]\.$/,
    );
    expect(await panel.locator('.request-outcome').textContent()).toMatch(
      /succeeded on e2e-[123], took \d+ ms/,
    );
    const withData = runs().slice(before);
    expect(withData).toEqual([
      expect.objectContaining({ job: 'nightly-report', data: { month: '2026-11' } }),
    ]);
    await panel.locator('a.history-link').click();
    const marked = page.locator('#history tr.requested-run');
    await marked.waitFor();
    expect(await marked.count()).toBe(1);
    expect(await marked.getAttribute('data-status')).toBe('succeeded');
    expect(await marked.textContent()).toContain('manual, by admin:ops');
    // the marked row is the fire the request became, and the panel stays across pages
    const fireAt = await marked.locator('td[data-label="Fire"] time').getAttribute('datetime');
    expect(new Date(fireAt as string).getTime()).toBe(withData[0]?.fireAt);
    expect(await panel.isVisible()).toBe(true);
    await page.close();
  });

  it('pausing through the button makes the fleet record the next fires as skipped (paused)', async () => {
    const page = await signIn(WRITE);
    await row(page, 'tick').getByRole('button', { name: 'Pause' }).click();
    await confirmDialog(page);
    await row(page, 'tick').locator('.badge-paused').waitFor();
    expect(await row(page, 'tick').locator('.skip-note').textContent()).toBe(
      'will be skipped (paused)',
    );
    const state = await fleet.store.getJobState('tick');
    expect(state).toMatchObject({ paused: true, pausedBy: 'admin:ops' });
    const pausedAt = Date.now();
    const skipped = await until('tick fires recorded skipped (paused)', async () => {
      const page = await fleet.store.history('tick', { status: 'skipped', limit: 10 });
      return (
        page.executions.filter((e) => e.reason === 'paused' && e.fireAt > pausedAt).length >= 2
      );
    });
    expect(skipped).toBe(true);
    const ranWhilePaused = fleet.ledger.filter(
      (e) => e.job === 'tick' && e.fireAt > pausedAt + 1000,
    );
    expect(ranWhilePaused).toEqual([]);
    await page.click('a[href="#/jobs/tick"]');
    await page
      .locator('#history tr[data-status="skipped"]', { hasText: 'paused' })
      .first()
      .waitFor();
    await page.getByRole('button', { name: 'Resume' }).click();
    await confirmDialog(page);
    await until('tick resumed', async () => !(await fleet.store.getJobState('tick')).paused);
    await page.close();
  });

  it('works by keyboard (confirmation dialog, Esc cancels) and fits a phone screen', async () => {
    const page = await signIn(WRITE);
    const pause = row(page, 'flaky').getByRole('button', { name: 'Pause' });
    await pause.focus();
    await page.keyboard.press('Enter');
    const dialog = page.locator('dialog.confirm');
    await dialog.waitFor();
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Pause');
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'detached' });
    expect((await fleet.store.getJobState('flaky')).paused).toBe(false);
    // The auto-refresh re-renders the table: the focus stays on the same button.
    const updated = await page.locator('p.status').textContent();
    await until(
      'a refresh',
      async () => (await page.locator('p.status').textContent()) !== updated,
    );
    expect(await page.evaluate(() => document.activeElement?.getAttribute('data-key'))).toBe(
      'pause:flaky',
    );
    await page.setViewportSize({ width: 390, height: 844 });
    await row(page, 'flaky').waitFor();
    const overflow = await page.evaluate(
      () => document.documentElement.scrollWidth - window.innerWidth,
    );
    expect(overflow).toBeLessThanOrEqual(0);
    expect(await page.locator('#jobs thead').isVisible()).toBe(false);
    await page.close();
  });

  it('a read-only token sees no buttons and gets 403 from the API', async () => {
    const page = await signIn(READ);
    await row(page, 'tick').waitFor();
    expect(await page.locator('#jobs button').count()).toBe(0);
    expect(await page.locator('#who').textContent()).toContain('read only');
    const status = await page.evaluate(async (base) => {
      const response = await fetch(`${base}/api/jobs/tick/pause`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${sessionStorage.getItem('fleetcron.token')}`,
          'content-type': 'application/json',
          'x-fleetcron-request': 'console',
        },
        body: '{}',
      });
      return response.status;
    }, `${origin}/admin`);
    expect(status).toBe(403);
    expect((await fleet.store.getJobState('tick')).paused).toBe(false);
    await page.close();
  });

  it('a cross-site form post is refused even with a valid session cookie', async () => {
    await browser.context.addCookies([
      { name: 'fc_session', value: SESSION, url: origin, sameSite: 'Lax' },
    ]);
    const evil = createServer((_req, res) => {
      res.setHeader('content-type', 'text/html');
      res.end(
        `<form id="f" method="POST" action="${origin}/admin/api/jobs/tick/pause" enctype="text/plain"><input name='{"a":"' value='"}'></form><script>document.getElementById('f').submit()</script>`,
      );
    });
    const evilOrigin = await listen(evil);
    try {
      const page = await browser.context.newPage();
      const answer = page.waitForResponse((r) => r.url().endsWith('/admin/api/jobs/tick/pause'));
      await page.goto(evilOrigin);
      const response = await answer;
      expect(response.status()).toBe(403);
      await page.waitForURL(/\/pause$/);
      expect(JSON.parse((await page.textContent('body')) ?? '')).toMatchObject({
        error: { code: 'CROSS_SITE_REFUSED' },
      });
      expect((await response.request().allHeaders()).cookie).toContain(`fc_session=${SESSION}`);
      expect((await fleet.store.getJobState('tick')).paused).toBe(false);
      await page.close();
    } finally {
      evil.closeAllConnections();
      await new Promise((resolve) => evil.close(resolve));
      await browser.context.clearCookies();
    }
  });

  it('saves a screenshot of the jobs table (docs/console.png with FLEETCRON_UPDATE_DOCS=1)', async () => {
    const page = await signIn(WRITE);
    await until(
      'a finished run of every scheduled job',
      async () => (await page.locator('#jobs .badge-succeeded, #jobs .badge-failed').count()) >= 2,
    );
    mkdirSync(fileURLToPath(new URL('../.reports/', import.meta.url)), { recursive: true });
    const box = await page.locator('#app').boundingBox();
    await page.screenshot({
      path: SCREENSHOT,
      clip: {
        x: 0,
        y: 0,
        width: 1280,
        height: Math.ceil((box?.y ?? 0) + (box?.height ?? 800) + 16),
      },
    });
    if (process.env.FLEETCRON_UPDATE_DOCS === '1') copyFileSync(SCREENSHOT, DOCS_IMAGE);
    await page.close();
  });
});

describe('drift and the instances list in Chromium', { timeout: 60_000 }, () => {
  it('flags a job two live instances define differently and lists both instances', async () => {
    const store = new MemoryStore();
    const billing = (expression: string): RegisteredJob => {
      const trigger = cron(expression, { tz: 'Europe/Berlin' });
      const spec = trigger.spec ?? null;
      const base = {
        trigger: trigger.describe(),
        leaseMs: 30_000,
        overlap: 'skip',
        catchUp: 'skip' as const,
      };
      return { name: 'billing', spec, ...base, definitionHash: definitionHash({ ...base, spec }) };
    };
    for (const [id, expression] of [
      ['old-deploy', '0 3 * * *'],
      ['new-deploy', '0 4 * * *'],
    ] as const) {
      await store.heartbeat({
        instanceId: id,
        host: 'h',
        pid: 1,
        version: '0.1.0',
        startedAt: Date.now(),
        heartbeatMs: 60_000,
        clock: null,
        jobs: [billing(expression)],
      });
    }
    const handler = createAdminHandler({
      fleet: new FleetClient({ store }),
      token: WRITE,
      basePath: '/admin',
    });
    const server = createServer(toNodeListener(handler));
    const driftOrigin = await listen(server);
    try {
      const page = await browser.context.newPage();
      await page.goto(`${driftOrigin}/admin/`);
      await page.fill('#token', WRITE);
      await page.click('button[type=submit]');
      await page.locator('#jobs tr[data-job="billing"] .badge-drift').waitFor();
      expect(await page.locator('p.warning[role="alert"]').textContent()).toContain('billing');
      await page.click('a[href="#/instances"]');
      await page.locator('#instances').waitFor();
      expect(await page.locator('#instances tbody tr').count()).toBe(2);
      expect(await page.locator('#instances').textContent()).toContain('new-deploy');
      await page.close();
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
