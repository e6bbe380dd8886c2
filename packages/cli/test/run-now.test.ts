import { randomUUID } from 'node:crypto';
import { cron, Scheduler } from '@fleetcron/core';
import { RedisLock } from '@fleetcron/lock-redis';
import { RedisStore } from '@fleetcron/store-redis';
import type {} from '@fleetcron/testkit';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { runFleetcron } from './built-bin.js';

/** Polls `check` until truthy or throws after `timeoutMs`. */
async function until<T>(what: string, check: () => Promise<T>, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('fleetcron run on a fleet of two real Schedulers (Redis)', () => {
  const prefix = `cli-run-${randomUUID()}`;
  const clients: Redis[] = [];
  const schedulers: Scheduler[] = [];
  const ledger: string[] = [];
  const data: unknown[] = [];
  let store: RedisStore;

  beforeAll(async () => {
    const url = inject('fleetcronRedisUrl');
    for (let i = 0; i < 2; i++) {
      const client = new Redis(url);
      client.on('error', () => {});
      clients.push(client);
      const instanceStore = new RedisStore(client, { prefix });
      const scheduler = new Scheduler({
        lock: new RedisLock(client, { prefix }),
        store: instanceStore,
        instanceId: `cli-e2e-${i + 1}`,
        heartbeatMs: 1000,
      });
      scheduler.add({
        name: 'report',
        trigger: cron('0 3 * * *', { tz: 'Europe/Berlin' }),
        run: (ctx) => {
          ledger.push(ctx.instanceId);
          data.push(ctx.request?.data ?? null);
        },
      });
      scheduler.start();
      schedulers.push(scheduler);
      store = instanceStore;
    }
  });

  afterAll(async () => {
    await Promise.all(schedulers.map((s) => s.stop({ drainMs: 1000 })));
    for (const client of clients) client.disconnect();
  });

  it('lists both instances, then runs the job exactly once and shows it in history', async () => {
    const args = ['--redis', inject('fleetcronRedisUrl'), '--prefix', prefix];
    await until('both instances in the registry', async () => {
      const run = await runFleetcron(['instances', '--json', ...args]);
      return (JSON.parse(run.stdout) as unknown[]).length === 2;
    });
    const bad = await runFleetcron(['run', 'report', '--data', '{nope', ...args]);
    expect(bad.code, 'data that is not JSON is a usage error').toBe(2);
    expect(bad.stderr).toMatch(/--data must be JSON/);
    const run = await runFleetcron([
      'run',
      'report',
      '--by',
      'alice',
      '--data',
      '{"month":"2026-11"}',
      ...args,
    ]);
    expect(run.code, run.stderr).toBe(0);
    const done = await until('the manual run in history', async () => {
      const page = await store.history('report', {});
      return page.executions.find((e) => e.requestedBy === 'alice' && e.finishedAt !== null);
    });
    expect(done?.status).toBe('succeeded');
    expect(ledger).toHaveLength(1);
    expect(data, 'the run saw the request data').toEqual([{ month: '2026-11' }]);
    const history = await runFleetcron(['history', 'report', ...args]);
    expect(history.stdout.trim().split('\n')).toHaveLength(2);
    expect(history.stdout).toMatch(/succeeded .+manual by alice/);
  });
});
