import { randomUUID } from 'node:crypto';
import { cron, every, type Store, type Trigger } from '@fleetcron/core';
import { definitionHash } from '@fleetcron/core/backend';

/** A job as an instance publishes it, built with core's own helpers. */
export function registered(name: string, trigger: Trigger) {
  const spec = trigger.spec ?? null;
  const base = {
    trigger: trigger.describe(),
    leaseMs: 30_000,
    overlap: 'skip',
    catchUp: 'skip' as const,
  };
  return { name, spec, ...base, definitionHash: definitionHash({ ...base, spec }) };
}

/**
 * Seeds a fleet through the Store API, as a running scheduler would: instance `i-1` defines
 * `billing` (03:00 Berlin) and `cleanup` (every minute); `billing` has 6 runs, 2 of them failed.
 */
export async function seedFleet(store: Store): Promise<void> {
  await store.heartbeat?.({
    instanceId: 'i-1',
    host: 'seed-host',
    pid: 7,
    version: '0.1.0',
    startedAt: Date.now() - 60_000,
    heartbeatMs: 60_000,
    clock: null,
    jobs: [
      registered('billing', cron('0 3 * * *', { tz: 'Europe/Berlin' })),
      registered('cleanup', every(60_000)),
    ],
  });
  const start = Date.now() - 10 * 60_000;
  for (let i = 0; i < 6; i++) {
    const failed = i % 3 === 0;
    await store.record({
      id: randomUUID(),
      job: 'billing',
      fireAt: start + i * 60_000,
      status: failed ? 'failed' : 'succeeded',
      attempt: 1,
      instanceId: 'i-1',
      token: i + 1,
      startedAt: start + i * 60_000,
      finishedAt: start + i * 60_000 + 5,
      error: failed ? `Error: card declined ${i}\n    at charge (billing.ts:3:9)` : null,
    });
  }
}
