import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { FleetClient, MemoryLock, Scheduler, ScheduleServer } from '@fleetcron/core';
import { PostgresStore } from '@fleetcron/store-postgres';
import type {} from '@fleetcron/testkit';
import pg from 'pg';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type AdminActionRecord, createAdminHandler, toNodeListener } from '../src/index.js';
import { launchBrowser, until } from './browser.js';

const WRITE = 'sched-write-token-0123456789';
/** Screenshots for people reviewing the pages (not compared). */
const FORM_SHOT = fileURLToPath(new URL('../.reports/schedule-form.png', import.meta.url));
const LIST_SHOT = fileURLToPath(new URL('../.reports/schedules.png', import.meta.url));
const READ = 'sched-read-token-0123456789';

let pool: pg.Pool;
let fleet: FleetClient;
let admin: Server;
let origin: string;
let browser: { context: BrowserContext; close(): Promise<void> };
const actions: AdminActionRecord[] = [];
const instances: Array<{ scheduler: Scheduler; server: ScheduleServer }> = [];

function listen(server: Server): Promise<string> {
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`),
    ),
  );
}

/** Signs in with `token` and opens the schedules list through the nav link. */
async function schedulesPage(token: string): Promise<Page> {
  const page = await browser.context.newPage();
  await page.goto(`${origin}/admin/`);
  await page.fill('#token', token);
  await page.click('button[type=submit]');
  await page.waitForSelector('#jobs, main p.muted');
  await page.click('nav a[href="#/schedules"]');
  await page.waitForSelector('#schedules, #schedules-empty');
  return page;
}

/** The ids each live instance's ScheduleServer serves, with their versions. */
function served(): string[] {
  return instances.flatMap((i) => i.server.served().map((s) => `${s.id}@${s.version}`)).sort();
}

beforeAll(async () => {
  const url = inject('fleetcronPostgresUrl');
  if (!url)
    throw new Error('no shared PostgreSQL: vitest.config.ts must use the testkit global setup');
  pool = new pg.Pool({ connectionString: url, max: 8 });
  pool.on('error', () => {});
  const store = new PostgresStore(pool, { schema: `console_sched_${randomUUID().slice(0, 8)}` });
  await store.migrate();
  fleet = new FleetClient({ store });
  // Two instances serving the handler `reports.daily` (nothing fires: 03:00 and 04:30 only).
  for (const instanceId of ['srv-1', 'srv-2']) {
    const scheduler = new Scheduler({
      lock: new MemoryLock(),
      store,
      instanceId,
      heartbeatMs: 500,
    });
    const server = new ScheduleServer({
      scheduler,
      store,
      handlers: { 'reports.daily': () => {} },
    });
    await server.start();
    scheduler.start();
    instances.push({ scheduler, server });
  }
  const handler = createAdminHandler({
    fleet,
    basePath: '/admin',
    refreshMs: 1000,
    tokens: [
      { token: WRITE, role: 'write', name: 'ops' },
      { token: READ, role: 'read', name: 'viewer' },
    ],
    onAction: (record) => actions.push(record),
  });
  admin = createServer(toNodeListener(handler));
  origin = await listen(admin);
  browser = await launchBrowser();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  admin?.closeAllConnections();
  await new Promise((resolve) => admin?.close(resolve));
  for (const { server, scheduler } of instances) {
    await server.stop();
    await scheduler.stop();
  }
  await pool?.end();
});

describe('stored schedules in the console, in Chromium, over two instances on PostgreSQL', {
  timeout: 60_000,
}, () => {
  it('creates a schedule through the form, after a field error for a bad cron expression', async () => {
    const page = await schedulesPage(WRITE);
    expect(await page.locator('#schedules-empty').textContent()).toContain('No stored schedules');
    await page.click('#new-schedule');
    await page.locator('#schedule-form').waitFor();
    await page.fill('#sf-id', 'acme-daily');
    await page.fill('#sf-handler', 'reports.daily');
    await page.fill('#sf-expression', '61 * * * *');
    await page.fill('#sf-tz', 'Europe/Berlin');
    await page.fill('#sf-data', '{"customer": "acme"}');
    await page.click('#sf-submit');
    const expressionError = page.locator('[data-field="trigger.expression"] .field-error');
    await until('the field error under the cron expression', async () =>
      ((await expressionError.textContent()) ?? '').includes('61'),
    );
    expect(await page.locator('#sf-expression').getAttribute('aria-invalid')).toBe('true');
    await page.screenshot({ path: FORM_SHOT, fullPage: true });
    expect(await page.locator('#sf-error').textContent()).toBe('');
    expect((await fleet.listSchedules()).schedules).toEqual([]);
    // JSON that does not parse is caught before sending, under its own field
    await page.fill('#sf-expression', '0 3 * * *');
    await page.fill('#sf-data', '{customer: acme}');
    await page.click('#sf-submit');
    await until('the field error under the data', async () =>
      ((await page.locator('[data-field="data"] .field-error').textContent()) ?? '').includes(
        'must be JSON',
      ),
    );
    expect(await expressionError.textContent()).toBe('');
    expect((await fleet.listSchedules()).schedules).toEqual([]);
    await page.fill('#sf-data', '{"customer": "acme"}');
    await page.click('#sf-submit');
    await page.waitForURL(/#\/schedules\/acme-daily$/);
    await page.locator('#notice.notice-ok').waitFor();
    expect(await page.locator('#notice').textContent()).toContain('created');
    expect(await fleet.getSchedule('acme-daily')).toMatchObject({
      version: 1,
      handler: 'reports.daily',
      trigger: { kind: 'cron', expression: '0 3 * * *', tz: 'Europe/Berlin' },
      data: { customer: 'acme' },
      enabled: true,
      createdBy: 'admin:ops',
    });
    // both instances pick it up, and the page names them once they have heartbeated
    await until(
      'both instances to serve it',
      () => served().join() === 'acme-daily@1,acme-daily@1',
    );
    await until('the page to name both serving instances', async () => {
      const text =
        (await page
          .locator('#schedule .served-by')
          .textContent()
          .catch(() => '')) ?? '';
      return text.includes('srv-1') && text.includes('srv-2');
    });
    await page.close();
  });

  it('edits it (with the version read: a stale form is refused with a reload), then disables and deletes it', async () => {
    const page = await schedulesPage(WRITE);
    const row = page.locator('#schedules tr[data-schedule="acme-daily"]');
    expect(await row.locator('td[data-label="Trigger"]').textContent()).toBe(
      'cron 0 3 * * * (Europe/Berlin)',
    );
    expect(await row.locator('td[data-label="Last change"]').textContent()).toContain('admin:ops');
    await row.locator('a[href="#/schedules/acme-daily"]').click();
    await page.locator('#schedule-form').waitFor();
    expect(await page.inputValue('#sf-expression')).toBe('0 3 * * *');
    await page.fill('#sf-expression', '30 4 * * *');
    await page.fill('#sf-timeoutMs', '5000');
    // a poll re-renders the page while the form is open: what was typed and the focus stay
    const before = await page.locator('.status').textContent();
    await page.waitForFunction(
      (text) => document.querySelector('.status')?.textContent !== text,
      before,
      { timeout: 10_000 },
    );
    expect(await page.inputValue('#sf-expression')).toBe('30 4 * * *');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('sf-timeoutMs');
    await page.click('#sf-submit');
    await until('the notice of the save', async () =>
      ((await page.locator('#notice').textContent()) ?? '').includes('version 2'),
    );
    expect(await fleet.getSchedule('acme-daily')).toMatchObject({
      version: 2,
      trigger: { expression: '30 4 * * *', tz: 'Europe/Berlin' },
      options: { timeoutMs: 5000 },
      updatedBy: 'admin:ops',
    });
    await until(
      'both instances on version 2',
      () => served().join() === 'acme-daily@2,acme-daily@2',
    );
    // the form is built again from version 2 before someone else changes it
    await until('the form to edit version 2', async () =>
      ((await page.locator('#sf-version').textContent()) ?? '').includes('version 2'),
    );

    // someone else changes it while the form is open: saving is refused, reload shows theirs
    await fleet.updateSchedule(
      'acme-daily',
      { data: { customer: 'acme', by: 'cli' } },
      { by: 'cli:bob', expectedVersion: 2 },
    );
    await page.fill('#sf-note', 'will be refused');
    await page.click('#sf-submit');
    await until('the conflict above the buttons', async () =>
      ((await page.locator('#sf-error').textContent()) ?? '').includes('changed by someone else'),
    );
    expect((await fleet.getSchedule('acme-daily'))?.options.note).toBeUndefined();
    await page.click('#sf-reload');
    await until('the form reloaded at version 3', async () =>
      (await page.inputValue('#sf-data')).includes('"cli"'),
    );
    expect(await page.inputValue('#sf-note')).toBe('');

    await page.getByRole('button', { name: 'Disable' }).click();
    await until('the notice of the disable', async () =>
      ((await page.locator('#notice').textContent()) ?? '').includes('disabled'),
    );
    expect(await fleet.getSchedule('acme-daily')).toMatchObject({ enabled: false, version: 4 });
    await until('no instance serving it', () => served().length === 0);
    await page.locator('#schedule .badge', { hasText: 'disabled' }).waitFor();

    await page.getByRole('button', { name: 'Delete' }).click();
    const dialog = page.locator('dialog.confirm');
    await dialog.waitFor();
    expect(await dialog.locator('h2').textContent()).toContain('acme-daily');
    await dialog.locator('#confirm-note').fill('customer left');
    await dialog.locator('button[data-confirm]').click();
    await page.waitForURL(/#\/schedules$/);
    await until('the notice of the delete', async () =>
      ((await page.locator('#notice').textContent()) ?? '').includes('deleted'),
    );
    expect(await fleet.getSchedule('acme-daily')).toBeNull();
    expect(actions.map((a) => [a.action, a.version, a.by])).toEqual([
      ['schedule.create', 1, 'admin:ops'],
      ['schedule.update', 2, 'admin:ops'],
      ['schedule.disable', 4, 'admin:ops'],
      ['schedule.remove', 4, 'admin:ops'],
    ]);
    expect(actions.at(-1)?.note).toBe('customer left');
    await page.close();
  });

  it('shows a schedule no live instance serves as unserved', async () => {
    await fleet.createSchedule(
      { id: 'orphan', handler: 'nobody.registers', trigger: { kind: 'every', ms: 60_000 } },
      { by: 'cli:bob' },
    );
    const page = await schedulesPage(WRITE);
    const row = page.locator('#schedules tr[data-schedule="orphan"]');
    await row.waitFor();
    expect(await row.locator('.badge-failed').textContent()).toBe('unserved');
    expect(await row.locator('td[data-label="Served by"]').textContent()).toContain('unserved');
    expect(await page.locator('#unserved').textContent()).toContain('orphan');
    await page.screenshot({ path: LIST_SHOT, fullPage: true });
    // the handler filter: what is typed survives a poll, Enter applies it
    await fleet.createSchedule(
      { id: 'other', handler: 'reports.daily', trigger: { kind: 'every', ms: 60_000 } },
      { by: 'cli:bob' },
    );
    await page.locator('#schedules tr[data-schedule="other"]').waitFor();
    await page.fill('#schedule-handler-filter', 'nobody.registers');
    const before = await page.locator('.status').textContent();
    await page.waitForFunction(
      (text) => document.querySelector('.status')?.textContent !== text,
      before,
      { timeout: 10_000 },
    );
    expect(await page.inputValue('#schedule-handler-filter')).toBe('nobody.registers');
    await page.press('#schedule-handler-filter', 'Enter');
    await until(
      'only the orphan listed',
      async () => (await page.locator('#schedules tr[data-schedule]').count()) === 1,
    );
    expect(await page.locator('#schedules tr[data-schedule="orphan"]').count()).toBe(1);
    await fleet.removeSchedule('other', { by: 'cli:bob' });
    await page.close();
  });

  it('a read-only token sees the schedules but no buttons and no form', async () => {
    await fleet.createSchedule(
      {
        id: 'nightly',
        handler: 'reports.daily',
        trigger: { kind: 'cron', expression: '0 3 * * *' },
      },
      { by: 'cli:bob' },
    );
    const page = await schedulesPage(READ);
    await page.locator('#schedules tr[data-schedule="nightly"]').waitFor();
    const stored = (await fleet.listSchedules()).schedules.length;
    await until(
      'every stored schedule listed',
      async () => (await page.locator('#schedules tr[data-schedule]').count()) === stored,
    );
    expect(await page.locator('#schedules button').count()).toBe(0);
    expect(await page.locator('#new-schedule').count()).toBe(0);
    await page.click('#schedules a[href="#/schedules/nightly"]');
    await page.locator('#schedule-version').waitFor();
    expect(await page.locator('#schedule-version').textContent()).toBe('1');
    expect(await page.locator('main button').count()).toBe(0);
    expect(await page.locator('form').count()).toBe(0);
    await page.evaluate(() => {
      location.hash = '#/new-schedule';
    });
    await page.locator('main h1', { hasText: 'New schedule' }).waitFor();
    expect(await page.locator('form').count()).toBe(0);
    const refused = await page.evaluate(async (token) => {
      const response = await fetch('api/schedules/nightly/disable', {
        method: 'POST',
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': 'application/json',
          'x-fleetcron-request': 'console',
        },
        body: '{}',
      });
      return response.status;
    }, READ);
    expect(refused).toBe(403);
    expect((await fleet.getSchedule('nightly'))?.enabled).toBe(true);
    await page.close();
  });
});
