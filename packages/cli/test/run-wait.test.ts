import { randomUUID } from 'node:crypto';
import { cron, Scheduler } from '@fleetcron/core';
import { RedisLock } from '@fleetcron/lock-redis';
import { RedisStore } from '@fleetcron/store-redis';
import type {} from '@fleetcron/testkit';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { runFleetcron } from './built-bin.js';
import { registered } from './seed.js';

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

/** The request id `fleetcron run` printed. */
function requestIdOf(stdout: string): string {
  const id = /request ([0-9a-f-]{36})/.exec(stdout)?.[1];
  if (!id) throw new Error(`no request id in ${JSON.stringify(stdout)}`);
  return id;
}

describe('fleetcron run --wait and fleetcron request on two real Schedulers (Redis)', () => {
  const prefix = `cli-wait-${randomUUID()}`;
  const clients: Redis[] = [];
  const schedulers: Scheduler[] = [];
  const seen: unknown[] = [];
  let store: RedisStore;
  let args: string[];

  beforeAll(async () => {
    const url = inject('fleetcronRedisUrl');
    args = ['--redis', url, '--prefix', prefix];
    for (let i = 0; i < 2; i++) {
      const client = new Redis(url);
      client.on('error', () => {});
      clients.push(client);
      store = new RedisStore(client, { prefix });
      const scheduler = new Scheduler({
        lock: new RedisLock(client, { prefix }),
        store,
        instanceId: `wait-${i + 1}`,
        heartbeatMs: 1000,
      });
      const daily = cron('0 3 * * *', { tz: 'Europe/Berlin' });
      scheduler.add({ name: 'report', trigger: daily, run: (ctx) => void seen.push(ctx.request) });
      scheduler.add({
        name: 'broken',
        trigger: daily,
        run: () => {
          throw new Error('ledger locked by another month');
        },
      });
      scheduler.add({ name: 'held', trigger: daily, run: () => {} });
      scheduler.start();
      schedulers.push(scheduler);
    }
    // An instance that defines `orphan` in the registry but takes nothing: what the store sees of
    // a frozen process until its heartbeat runs out (three minutes here).
    await store.heartbeat({
      instanceId: 'frozen-1',
      host: 'frozen-host',
      pid: 1,
      version: '0.1.0',
      startedAt: Date.now(),
      heartbeatMs: 60_000,
      clock: null,
      jobs: [registered('orphan', cron('0 3 * * *'))],
    });
    await until('both schedulers in the registry', async () => {
      const instances = await store.instances();
      return instances.filter((i) => i.instanceId.startsWith('wait-')).length === 2;
    });
  });

  afterAll(async () => {
    await Promise.all(schedulers.map((s) => s.stop({ drainMs: 1000 })));
    await store?.leave('frozen-1');
    for (const client of clients) client.disconnect();
  });

  it('waits for a run that succeeds: exit 0, the outcome printed; request <id> shows the fire', async () => {
    const run = await runFleetcron([
      ...['run', 'report', '--wait', '--timeout', '15000', '--by', 'alice'],
      ...['--data', '{"month":"2026-11"}', ...args],
    ]);
    expect(run.code, run.stderr).toBe(0);
    const id = requestIdOf(run.stdout);
    expect(run.stdout).toMatch(/decided as the manual fire \S+ by wait-[12]/);
    expect(run.stdout).toMatch(/^succeeded on wait-[12], took \d+ ms$/m);
    expect(seen).toEqual([{ id, by: 'alice', data: { month: '2026-11' } }]);

    const shown = await runFleetcron(['request', id, ...args]);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toMatch(/job report, by alice .*: decided as the manual fire/);
    expect(shown.stdout).toMatch(/^succeeded on wait-[12]/m);
    const json = await runFleetcron(['request', id, '--json', ...args]);
    const view = JSON.parse(json.stdout);
    expect(view.request).toMatchObject({ id, state: 'decided', job: 'report', takes: 1 });
    expect(view.executions).toHaveLength(1);
    expect(view.executions[0]).toMatchObject({
      fireAt: view.request.fireAt,
      status: 'succeeded',
      requestedBy: 'alice',
    });
    expect(view.outcome).toBe('succeeded');
  });

  it('a run that fails exits 6 with the error; --json prints the request and the execution', async () => {
    const run = await runFleetcron([
      'run',
      'broken',
      '--wait',
      '--json',
      '--timeout',
      '15000',
      ...args,
    ]);
    expect(run.code, run.stderr).toBe(6);
    const out = JSON.parse(run.stdout);
    expect(out.timedOut).toBe(false);
    expect(out.outcome).toBe('failed');
    expect(out.request).toMatchObject({ job: 'broken', state: 'decided' });
    expect(out.executions[0]).toMatchObject({ status: 'failed', fireAt: out.request.fireAt });
    expect(out.executions[0].error).toMatch(/ledger locked by another month/);
    const text = await runFleetcron(['run', 'broken', '--wait', '--timeout', '15000', ...args]);
    expect(text.code).toBe(6);
    expect(text.stdout).toMatch(/^failed on wait-[12], took \d+ ms: Error: ledger locked/m);
  });

  it('a paused job: the request is decided and its run skipped, exit 7', async () => {
    await store.setPaused('held', true, { by: 'ops' });
    try {
      const run = await runFleetcron(['run', 'held', '--wait', '--timeout', '15000', ...args]);
      expect(run.code, run.stderr).toBe(7);
      expect(run.stdout).toMatch(/^skipped \(paused\) on wait-[12]/m);
    } finally {
      await store.setPaused('held', false);
    }
  });

  it('no live instance takes the request: --timeout exits 8 saying where it is; request <id> shows it pending', async () => {
    const run = await runFleetcron(['run', 'orphan', '--wait', '--timeout', '1500', ...args]);
    expect(run.code, run.stderr).toBe(8);
    expect(run.stdout).toMatch(/: pending, no instance has taken it yet/);
    expect(run.stderr).toMatch(/--timeout 1500 ms passed before the run ended/);
    const id = requestIdOf(run.stdout);
    const shown = await runFleetcron(['request', id, '--json', ...args]);
    expect(shown.code, shown.stderr).toBe(0);
    expect(JSON.parse(shown.stdout)).toMatchObject({
      request: { id, state: 'pending', takes: 0, takenBy: null, fireAt: null },
      executions: [],
      outcome: null,
    });
  });

  it('an unknown request id exits 4; --timeout without --wait is a usage error', async () => {
    const unknown = await runFleetcron(['request', randomUUID(), ...args]);
    expect(unknown.code).toBe(4);
    expect(unknown.stderr).toMatch(/no run request/);
    const bad = await runFleetcron(['run', 'report', '--timeout', '100', ...args]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--timeout applies to "run --wait" only/);
  });
});
