import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  type Calendar,
  cron,
  exclusions,
  FleetClient,
  MemoryStore,
  offsetClock,
  realClock,
} from '@fleetcron/core';
import { registeredJob } from '@fleetcron/core/backend';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdminHandler, toNodeListener } from '../src/index.js';
import { launchBrowser } from './browser.js';
import { instanceRecord } from './fleet-fixture.js';

// Issue 29: a job's next fires excluded by its calendar are listed, marked with the reason.

const TOKEN = 'excluded-read-token-0123456789';
const VIEW_AT = Date.parse('2026-12-22T12:00:00Z'); // the console's fleet view as of this time
let server: Server;
let origin: string;
let browser: Awaited<ReturnType<typeof launchBrowser>>;

function job(name: string, expression: string, tz: string, exclude: Calendar) {
  return registeredJob({
    name,
    trigger: cron(expression, { tz }),
    leaseMs: 30_000,
    overlap: 'skip',
    exclude,
  });
}

beforeAll(async () => {
  const store = new MemoryStore();
  await store.heartbeat(
    instanceRecord('i-1', [
      job(
        'billing',
        '0 3 * * *',
        'Europe/Berlin',
        exclusions({
          dates: [
            { date: '2026-12-24', reason: 'holiday: Christmas Eve' },
            { date: '2026-12-25', reason: 'holiday: Christmas Day' },
          ],
        }),
      ),
      job(
        'digest',
        '0 9 * * *',
        'UTC',
        exclusions({ ranges: [{ from: '2026-12-23', to: '2026-12-23', reason: 'freeze' }] }),
      ),
      job('quiet', '0 9 * * *', 'UTC', {
        excludedBy: () => 'never shown',
        describe: () => 'quiet()',
      }),
    ]),
  );
  const handler = createAdminHandler({
    fleet: new FleetClient({ store, clock: offsetClock(realClock, VIEW_AT - Date.now()) }),
    basePath: '/admin',
    tokens: [{ token: TOKEN, role: 'read', name: 'viewer' }],
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
  await new Promise((resolve) => server?.close(resolve));
});

describe('console: excluded next fires', () => {
  it('the jobs table marks an excluded next fire; the job page marks each excluded fire', async () => {
    const page = await browser.context.newPage();
    await page.goto(`${origin}/admin/`);
    await page.fill('#token', TOKEN);
    await page.click('button[type=submit]');
    await page.waitForSelector('#jobs');
    const next = (name: string) =>
      page.locator(`#jobs tr[data-job="${name}"] td[data-label="Next fire"]`);
    await next('digest').locator('time').waitFor();
    expect(await next('digest').locator('.excluded-note').textContent()).toBe('excluded: freeze');
    expect(await next('billing').locator('.excluded-note').count()).toBe(0);

    await page.click('a[href="#/jobs/billing"]');
    await page.locator('ol.fires li').first().waitFor();
    const fires = await page
      .locator('ol.fires li')
      .evaluateAll((items) =>
        items.map((li) => [
          li.querySelector('code')?.textContent ?? '',
          li.getAttribute('data-excluded'),
          li.querySelector('.excluded-note')?.textContent ?? null,
        ]),
      );
    expect(fires).toEqual([
      ['2026-12-23T02:00:00.000Z', null, null],
      ['2026-12-24T02:00:00.000Z', 'holiday: Christmas Eve', 'excluded: holiday: Christmas Eve'],
      ['2026-12-25T02:00:00.000Z', 'holiday: Christmas Day', 'excluded: holiday: Christmas Day'],
      ['2026-12-26T02:00:00.000Z', null, null],
      ['2026-12-27T02:00:00.000Z', null, null],
    ]);
    // struck through, so an excluded fire does not read as one that runs
    const decoration = await page
      .locator('ol.fires li.excluded code')
      .first()
      .evaluate((el) => getComputedStyle(el).textDecorationLine);
    expect(decoration).toBe('line-through');
    expect(await page.locator('#exclude').textContent()).toContain('exclusions(2 dates)');

    await page.click('a[href="#/"]');
    await page.click('a[href="#/jobs/quiet"]');
    await page.locator('#exclude').waitFor();
    expect(await page.locator('#exclude').textContent()).toContain('a custom calendar');
    expect(await page.locator('ol.fires li.excluded').count()).toBe(0);
    await page.close();
  });
});
