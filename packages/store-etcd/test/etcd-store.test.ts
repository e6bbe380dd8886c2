import { DEFAULT_AUDIT_MAX_AGE_MS, type Execution, isFleetcronError } from '@fleetcron/core';
import { startEtcd, waitFor } from '@fleetcron/testkit';
import { Etcd3 } from 'etcd3';
import { afterAll, describe, expect, it } from 'vitest';
import { EtcdStore } from '../src/index.js';
import { DEFAULT_ETCD_AUDIT_MAX_ENTRIES, resolveStoreOptions } from '../src/options.js';
import { etcdStoreFixture, lazy } from './fixture.js';

// What the conformance suite does not cover: options, bounded history, moving an execution
// whose startedAt changed, and a stopped server.

const dedicated = lazy(() => startEtcd({ strategy: 'managed' }));
afterAll(async () => {
  await (await dedicated()).close();
});

function execution(id: string, startedAt: number, over: Partial<Execution> = {}): Execution {
  return {
    id,
    job: 'job',
    fireAt: startedAt,
    status: 'succeeded',
    attempt: 1,
    instanceId: 'i1',
    token: 1,
    startedAt,
    finishedAt: startedAt + 5,
    error: null,
    ...over,
  };
}

describe('EtcdStore options', () => {
  it.each([
    ['prefix', { prefix: '' }],
    ['maxHistory', { maxHistory: 0 }],
    ['maxErrorLength', { maxErrorLength: 1.5 }],
    ['requestTimeoutMs', { requestTimeoutMs: 0 }],
    ['maxTxnOps', { maxTxnOps: 3 }],
    ['audit.maxEntries', { audit: { maxEntries: 0 } }],
    ['audit.maxAgeMs', { audit: { maxAgeMs: -1 } }],
  ])('rejects a bad %s at construction with a typed error naming it', (field, options) => {
    const client = new Etcd3({ hosts: ['http://127.0.0.1:1'] });
    let error: unknown;
    try {
      new EtcdStore(client, options);
    } catch (e) {
      error = e;
    } finally {
      client.close();
    }
    expect(isFleetcronError(error, 'INVALID_OPTION')).toBe(true);
    expect((error as { field?: string }).field).toBe(field);
  });

  it("keeps 10,000 audit entries of 90 days by default (etcd's own bound), or what it is given", () => {
    expect(resolveStoreOptions({}).audit).toEqual({
      maxEntries: DEFAULT_ETCD_AUDIT_MAX_ENTRIES,
      maxAgeMs: DEFAULT_AUDIT_MAX_AGE_MS,
    });
    expect(DEFAULT_ETCD_AUDIT_MAX_ENTRIES).toBe(10_000);
    expect(resolveStoreOptions({ audit: { maxAgeMs: 60_000 } }).audit).toEqual({
      maxEntries: 10_000,
      maxAgeMs: 60_000,
    });
    expect(resolveStoreOptions({ audit: { maxEntries: 500_000 } }).audit.maxEntries).toBe(500_000);
  });
});

describe('EtcdStore on etcd', () => {
  it('keeps at most maxHistory executions per job, index keys included', async () => {
    const fixture = await etcdStoreFixture(await dedicated(), { maxHistory: 3 });
    try {
      const store = await fixture.newStore();
      for (let i = 0; i < 6; i++) await store.record(execution(`id-${i}`, 1000 + i));
      const page = await store.history('job');
      expect(page.executions.map((e) => e.id)).toEqual(['id-5', 'id-4', 'id-3']);
      const indexKeys = await fixture.admin.getAll().prefix(`${fixture.prefix}x/`).keys();
      expect(indexKeys, 'index keys of dropped executions are dropped too').toHaveLength(3);
    } finally {
      await fixture.close();
    }
  });

  it('moves an execution whose startedAt changed (one entry, at its new place)', async () => {
    const fixture = await etcdStoreFixture(await dedicated());
    try {
      const store = await fixture.newStore();
      await store.record(execution('moved', 1000, { status: 'running', finishedAt: null }));
      await store.record(execution('other', 1500));
      await store.record(execution('moved', 2000));
      const ids = (await store.history('job')).executions.map((e) => [e.id, e.startedAt]);
      expect(ids).toEqual([
        ['moved', 2000],
        ['other', 1500],
      ]);
    } finally {
      await fixture.close();
    }
  });

  it('a stopped server gives BackendUnavailableError within the timeout, then recovers (reads, watch)', async () => {
    const etcd = await dedicated();
    const fixture = await etcdStoreFixture(etcd, { requestTimeoutMs: 1000 });
    try {
      const store = (await fixture.newStore()) as EtcdStore;
      const writer = (await fixture.newStore()) as EtcdStore;
      const woken: string[] = [];
      const unsubscribe = store.watchRunRequests((job) => woken.push(job));
      await store.setPaused('job', true, { by: 'ops' });
      await etcd.stop?.();
      try {
        const started = Date.now();
        const error = await store.getJobState('job').then(
          () => new Error('answered with the server stopped'),
          (e: unknown) => e,
        );
        expect(isFleetcronError(error, 'BACKEND_UNAVAILABLE'), String(error)).toBe(true);
        expect(Date.now() - started).toBeLessThan(5_000);
        const take = await store.takeRunRequests(['job'], 'i').catch((e: unknown) => e);
        expect(isFleetcronError(take, 'BACKEND_UNAVAILABLE'), String(take)).toBe(true);
        const batch = await store
          .recordMany([execution('down', 1000, { status: 'succeeded', finishedAt: 1001 })])
          .catch((e: unknown) => e);
        expect(isFleetcronError(batch, 'BACKEND_UNAVAILABLE'), String(batch)).toBe(true);
      } finally {
        await etcd.start?.();
      }
      const state = await waitFor(() => store.getJobState('job').catch(() => undefined), {
        timeoutMs: 20_000,
        message: 'the store to read again after the restart',
      });
      expect(state).toMatchObject({ paused: true, pausedBy: 'ops' });
      // The watch made before the outage wakes listeners again (etcd3 re-creates it).
      await waitFor(
        async () => {
          await writer.requestRun({ job: 'after-restart', requestedBy: 'test' });
          return woken.includes('after-restart');
        },
        { timeoutMs: 20_000, intervalMs: 200, message: 'the watch to wake after the restart' },
      );
      unsubscribe();
    } finally {
      await fixture.close();
    }
  }, 60_000);
});
