import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { cron, every, FleetClient, MemoryStore } from '@fleetcron/core';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdminHandler, toNodeListener } from '../src/index.js';
import { launchBrowser, until } from './browser.js';
import { instanceRecord, registeredJob } from './fleet-fixture.js';

// Issue 30, items 4 and 6: the console's audit page, in real Chromium, over the memory store
// (the reference audit log; the Redis, etcd, SQL stores pass the same conformance scenario).

const WRITE = 'audit-write-token-0123456789';
const READ = 'audit-read-token-0123456789';
/** A screenshot for people reviewing the page (not compared). */
const SHOT = fileURLToPath(new URL('../.reports/audit.png', import.meta.url));
const SPOOFED_NOTE = 'ticket OPS-1 \u202Eexe.fdp'; // a bidi override inside a note
const LONG_NOTE = `why: ${'w'.repeat(995)}`; // 1,000 characters without a break opportunity

let store: MemoryStore;
let fleet: FleetClient;
let server: Server;
let origin: string;
let browser: { context: BrowserContext; close(): Promise<void> };

async function signIn(token: string): Promise<Page> {
  const page = await browser.context.newPage();
  await page.goto(`${origin}/`);
  await page.fill('#token', token);
  await page.click('button[type=submit]');
  await page.waitForSelector('#jobs');
  return page;
}

/** The rows of the audit table: `[action, job, who, note, details]` each. */
function rows(page: Page): Promise<string[][]> {
  return page.$$eval('#audit tbody tr', (trs) =>
    trs.map((tr) => {
      const text = (label: string) =>
        (tr.querySelector(`td[data-label="${label}"]`)?.textContent ?? '').trim();
      return [text('Action'), text('Job'), text('Who'), text('Note'), text('Details')];
    }),
  );
}

beforeAll(async () => {
  store = new MemoryStore();
  fleet = new FleetClient({ store });
  const jobs = [
    registeredJob('billing', cron('0 3 * * *', { tz: 'Europe/Berlin' })),
    registeredJob('cleanup', every(60_000)),
  ];
  await store.heartbeat(instanceRecord('i-1', jobs));
  const handler = createAdminHandler({
    fleet,
    refreshMs: 1000,
    tokens: [
      { token: WRITE, role: 'write', name: 'ops' },
      { token: READ, role: 'read', name: 'viewer' },
    ],
  });
  server = createServer(toNodeListener(handler));
  origin = await new Promise<string>((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`),
    ),
  );
  browser = await launchBrowser();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
});

describe('the audit page in Chromium', { timeout: 60_000 }, () => {
  it('lists a pause done in the console with who and its note, newest first', async () => {
    await fleet.createSchedule(
      { id: 'acme-daily', handler: 'reports.daily', trigger: { kind: 'every', ms: 3_600_000 } },
      { by: 'bob', note: 'new customer' },
    );
    await fleet.resume('cleanup', { by: 'alice', note: SPOOFED_NOTE });
    const page = await signIn(WRITE);
    await page.click('[data-key="pause:billing"]');
    await page.fill('#confirm-note', 'disk full on db-2');
    await page.click('dialog.confirm button[data-confirm]');
    await until('the pause', async () => (await store.getJobState('billing')).paused);
    await page.click('nav a[href="#/audit"]');
    await page.waitForSelector('#audit');
    const shown = await rows(page);
    expect(shown[0]).toEqual(['pause', 'billing', 'admin:ops', 'disk full on db-2', '']);
    // a bidi override in a stored note is shown as a visible mark, inside a <bdi>
    expect(shown[1]).toEqual(['resume', 'cleanup', 'alice', 'ticket OPS-1 ⟨U+202E⟩exe.fdp', '']);
    expect(shown[2]).toEqual([
      'schedule.create',
      'schedule:acme-daily',
      'bob',
      'new customer',
      'schedule acme-daily · version 1 · handler reports.daily · enabled true',
    ]);
    expect(await page.locator('#audit a[href="#/schedules/acme-daily"]').count()).toBe(1);
    expect(await page.evaluate(() => document.body.textContent?.includes('\u202E'))).toBe(false);
    expect(await page.locator('#audit tbody tr').nth(1).locator('.audit-note bdi').count()).toBe(1);
    await page.screenshot({ path: SHOT, fullPage: true });
    await page.close();
  });

  it('the read role sees it too; the job filter and the link #/audit/<job> show one job', async () => {
    await fleet.requestRun('cleanup', { by: 'carol', note: 'rerun after the fix' });
    const page = await signIn(READ);
    await page.goto(`${origin}/#/audit`);
    await page.waitForSelector('#audit');
    expect(await page.locator('[data-key^="pause:"]').count()).toBe(0); // read only
    await page.fill('#audit-job-filter', 'cleanup');
    await page.click('#audit-filter');
    await until('only cleanup rows', async () => {
      const shown = await rows(page);
      return shown.length > 0 && shown.every((r) => r[1] === 'cleanup');
    });
    expect(page.url()).toContain('#/audit/cleanup');
    expect((await rows(page)).map((r) => r[0])).toEqual(['run', 'resume']);
    expect((await rows(page))[0]?.[4]).toMatch(/^request [0-9a-f-]{36}$/);
    await page.selectOption('#audit-action-filter', 'resume');
    await page.click('#audit-filter');
    await until('only the resume', async () => (await rows(page)).length === 1);
    expect((await rows(page))[0]?.[0]).toBe('resume');
    // the job's page links to its audit
    await page.goto(`${origin}/#/jobs/billing`);
    await page.click('#job-audit');
    await until('billing rows only', async () => {
      const shown = await rows(page);
      return shown.length > 0 && shown.every((r) => r[1] === 'billing');
    });
    expect((await rows(page)).map((r) => r[0])).toEqual(['pause']);
    await page.goto(`${origin}/#/audit/${encodeURIComponent('no-such-job')}`);
    await page.waitForSelector('#audit-empty');
    expect(await page.locator('#audit-empty').textContent()).toContain('no-such-job');
    await page.close();
  });

  it('pages with "Older entries" and wraps a 1,000-character note instead of widening the page', async () => {
    for (let i = 0; i < 60; i++) {
      await fleet.pause('cleanup', { by: 'bulk', note: i === 59 ? LONG_NOTE : `n${i}` });
    }
    const page = await signIn(WRITE);
    await page.goto(`${origin}/#/audit`);
    await page.waitForSelector('#audit');
    expect(await page.locator('#audit tbody tr').count()).toBe(50);
    expect((await rows(page))[0]?.[3]).toBe(LONG_NOTE);
    expect(await page.evaluate(() => document.documentElement.scrollWidth - innerWidth)).toBe(0);
    await page.click('#more-audit');
    await until(
      'the second page',
      async () => (await page.locator('#audit tbody tr').count()) > 50,
    );
    const all = await rows(page);
    const total = (await fleet.audit({ limit: 1000 })).entries.length;
    expect(all).toHaveLength(total);
    expect(await page.locator('#more-audit').count()).toBe(0);
    await page.close();
  });
});
