import { randomUUID } from 'node:crypto';
import {
  cron,
  type Execution,
  every,
  type InstanceRecord,
  type RegisteredJob,
  type Store,
  type Trigger,
} from '@fleetcron/core';
import { definitionHash } from '@fleetcron/core/backend';

/** A job as an instance would publish it, built with core's own helpers. */
export function registeredJob(name: string, trigger: Trigger): RegisteredJob {
  const spec = trigger.spec ?? null;
  const base = {
    trigger: trigger.describe(),
    leaseMs: 30_000,
    overlap: 'skip',
    catchUp: 'skip' as const,
  };
  return { name, spec, ...base, definitionHash: definitionHash({ ...base, spec }) };
}

/** An instance record defining `jobs`. */
export function instanceRecord(instanceId: string, jobs: RegisteredJob[]): InstanceRecord {
  return {
    instanceId,
    host: 'test-host',
    pid: 4242,
    version: '0.1.0',
    startedAt: Date.now() - 60_000,
    heartbeatMs: 60_000,
    clock: { offsetMs: 3, rttMs: 1 },
    jobs,
  };
}

/** One finished execution of `job`. */
export function execution(
  job: string,
  startedAt: number,
  patch: Partial<Execution> = {},
): Execution {
  return {
    id: randomUUID(),
    job,
    fireAt: startedAt,
    status: 'succeeded',
    attempt: 1,
    instanceId: 'i-1',
    token: 1,
    startedAt,
    finishedAt: startedAt + 12,
    error: null,
    ...patch,
  };
}

/**
 * Seeds a fleet through the Store API: instance `i-1` defines `billing` (03:00 Berlin) and
 * `cleanup` (every minute); `billing` has 25 runs, every fifth failed with an error.
 */
export async function seedFleet(store: Store): Promise<{ jobs: string[]; failed: number }> {
  const jobs = [
    registeredJob('billing', cron('0 3 * * *', { tz: 'Europe/Berlin' })),
    registeredJob('cleanup', every(60_000)),
  ];
  await store.heartbeat?.(instanceRecord('i-1', jobs));
  const start = Date.now() - 25 * 60_000;
  let failed = 0;
  for (let i = 0; i < 25; i++) {
    const fail = i % 5 === 0;
    if (fail) failed++;
    await store.record(
      execution(
        'billing',
        start + i * 60_000,
        fail ? { status: 'failed', error: `Error: boom ${i}\n    at run (billing.ts:1:1)` } : {},
      ),
    );
  }
  return { jobs: ['billing', 'cleanup'], failed };
}
