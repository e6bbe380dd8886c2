import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { FleetClient, MemoryStore } from '@fleetcron/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdminHandler, toNodeListener } from '../src/index.js';
import { launchBrowser } from './browser.js';
import { execution, seedFleet } from './fleet-fixture.js';

// Issue 16: the console shows a sharded fire as one fire (a summary row) with its parts under it.

const TOKEN = 'shards-read-token-0123456789';
let server: Server;
let origin: string;
let browser: Awaited<ReturnType<typeof launchBrowser>>;
const fireAt = Date.now() - 30_000;

beforeAll(async () => {
  const store = new MemoryStore();
  await seedFleet(store);
  const parts: Array<[number, 'succeeded' | 'failed' | 'running']> = [
    [2, 'running'],
    [0, 'succeeded'],
    [1, 'failed'],
  ];
  for (const [index, status] of parts) {
    await store.record(
      execution('billing', Date.now() - 1_000 + index, {
        fireAt,
        status,
        instanceId: `i-${index}`,
        shard: { index, count: 3 },
        ...(status === 'running' ? { finishedAt: null } : {}),
      }),
    );
  }
  const handler = createAdminHandler({
    fleet: new FleetClient({ store }),
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

describe('console history of a sharded job', () => {
  it('one summary row for the fire, its parts in index order under it', async () => {
    const page = await browser.context.newPage();
    await page.goto(`${origin}/admin/`);
    await page.fill('#token', TOKEN);
    await page.click('button[type=submit]');
    await page.waitForSelector('#jobs');
    await page.click('a[href="#/jobs/billing"]');
    const group = page.locator(`#history tr.fire-group[data-fire="${fireAt}"]`);
    await group.waitFor();
    expect(await page.locator('#history tr.fire-group').count()).toBe(1);
    const summary = (await group.textContent()) ?? '';
    expect(summary).toContain('3 parts');
    for (const part of ['1 running', '1 succeeded', '1 failed']) expect(summary).toContain(part);
    // the three rows right after the summary are the parts, in index order
    const after = page.locator(`#history tr.fire-group[data-fire="${fireAt}"] ~ tr`);
    const labels = await after.locator('.part').allTextContents();
    expect(labels.slice(0, 3).map((t) => t.trim())).toEqual([
      'part 0 of 3',
      'part 1 of 3',
      'part 2 of 3',
    ]);
    expect(await after.nth(1).getAttribute('data-status')).toBe('failed');
    await page.close();
  });
});
