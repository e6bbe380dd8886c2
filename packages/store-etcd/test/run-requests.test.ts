import { randomUUID } from 'node:crypto';
import { FakeClock, isFleetcronError, type TakenRunRequest } from '@fleetcron/core';
import { DECIDED_RUN_REQUEST_KEEP_MS } from '@fleetcron/core/backend';
import { ReplyDroppingProxy, waitFor } from '@fleetcron/testkit';
import { etcdEndpoints } from '@fleetcron/testkit/vitest';
import { Etcd3 } from 'etcd3';
import { describe, expect, it } from 'vitest';
import { EtcdStore, type EtcdStoreOptions } from '../src/index.js';
import { StoreKeys } from '../src/keys.js';
import { decodeRunRequestRecord } from '../src/run-request-record.js';
import { etcdStoreFixture } from './fixture.js';

// Exactly-once run requests on a real etcd, with real faults (connections cut through a TCP
// link): what the conformance suite cannot do from outside the store.

const endpoints = etcdEndpoints();
const decision = { fireAt: 1_700_000_000_000, instanceId: 'inst-a' };

type Fixture = Awaited<ReturnType<typeof etcdStoreFixture>>;

async function withFixture(
  options: EtcdStoreOptions,
  body: (fixture: Fixture, keys: StoreKeys, newStore: () => Promise<EtcdStore>) => Promise<void>,
): Promise<void> {
  const fixture = await etcdStoreFixture({ endpoints: await endpoints() }, options);
  const newStore = async () => (await fixture.newStore()) as EtcdStore;
  try {
    await body(fixture, new StoreKeys(fixture.prefix), newStore);
  } finally {
    await fixture.close();
  }
}

/** A store whose client reaches etcd through a proxy of its own (lose its replies, cut it). */
async function linkedStore(
  fixture: Fixture,
  options: EtcdStoreOptions = {},
): Promise<{ store: EtcdStore; link: ReplyDroppingProxy }> {
  const link = await ReplyDroppingProxy.start((await endpoints())[0]!);
  const client = new Etcd3({ hosts: [link.url] });
  const store = new EtcdStore(client, { ...options, prefix: fixture.prefix });
  const close = fixture.close;
  fixture.close = async () => {
    await store.close();
    client.close();
    await link.close();
    await close();
  };
  return { store, link };
}

/** The request key's etcd `version`: how many times it was written since created. */
async function versionOf(fixture: Fixture, key: string): Promise<number> {
  const response = await fixture.admin.kv.range({ key: Buffer.from(key) });
  return Number(response.kvs[0]?.version ?? 0);
}

/** `promise`, or a failure naming `what` after `ms`. */
async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms);
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

describe('EtcdStore run requests, real faults', () => {
  it('a decision whose reply is lost: the retry answers true and the request is decided once', async () => {
    await withFixture({}, async (fixture, keys, newStore) => {
      const requester = await newStore();
      const { store: decider, link } = await linkedStore(fixture, { requestTimeoutMs: 3_000 });
      const request = await requester.requestRun({ job: 'lost-reply', requestedBy: 't' });
      const [take] = (await decider.takeRunRequests(['lost-reply'], 'inst-a')) as [TakenRunRequest];
      expect(take.id).toBe(request.id);
      const key = keys.runRequest(request.job, request.requestedAt, request.id);
      const watcher = await fixture.admin.watch().key(key).create();
      const applied = new Promise<void>((resolve) => {
        watcher.on('put', (kv) => {
          if (decodeRunRequestRecord(kv.value).decidedAt !== null) resolve();
        });
      });
      link.dropRepliesAfter('"decidedBy":"inst-a"'); // the decision's put, not its reads
      const answer = decider.decideRunRequest(request.id, take.takeId, decision).then(
        (value) => ({ value }),
        (error: unknown) => ({ error }),
      );
      await within(applied, 10_000, 'etcd to apply the decision'); // its reply is being dropped
      link.cutAll();
      const first = await answer;
      await watcher.cancel();
      expect('error' in first && isFleetcronError(first.error, 'BACKEND_UNAVAILABLE')).toBe(true);
      const lost = { id: request.id, take, key };
      const retried = await waitFor(
        () => decider.decideRunRequest(lost.id, lost.take.takeId, decision).catch(() => undefined),
        { timeoutMs: 15_000, message: 'the retried decision to answer' },
      );
      expect(retried, 'the retry of the same take answers true').toBe(true);
      const state = await requester.getRunRequest(lost.id);
      expect(state).toMatchObject({
        state: 'decided',
        takes: 1,
        fireAt: decision.fireAt,
        decidedBy: 'inst-a',
      });
      expect(
        await versionOf(fixture, lost.key),
        'written three times: requested, taken, decided (the retry wrote nothing)',
      ).toBe(3);
      expect(await requester.takeRunRequests(['lost-reply'], 'inst-b')).toEqual([]);
    });
  }, 60_000);

  it('a take whose client is cut off: another client takes the request after the lease', async () => {
    await withFixture({}, async (fixture, _keys, newStore) => {
      const other = await newStore();
      const { store: taker, link } = await linkedStore(fixture);
      const request = await other.requestRun({ job: 'cut-taker', requestedBy: 't' });
      const leaseMs = 1_500;
      const [take] = (await taker.takeRunRequests(['cut-taker'], 'inst-a', { leaseMs })) as [
        TakenRunRequest,
      ];
      expect(take.id).toBe(request.id);
      await link.close(); // the taker is gone: no decision, no release
      expect(await other.takeRunRequests(['cut-taker'], 'inst-b'), 'held by the take').toEqual([]);
      const retaken = await waitFor(
        async () => {
          const got = (await other.takeRunRequests(['cut-taker'], 'inst-b')) as TakenRunRequest[];
          return got.length > 0 ? { got, at: Date.now() } : undefined;
        },
        { timeoutMs: 15_000, intervalMs: 50, message: 'the request taken again after the lease' },
      );
      expect(retaken.got.map((r) => r.id)).toEqual([request.id]);
      expect(retaken.got[0]!.takes).toBe(2);
      expect(retaken.at, 'not before the lease ended').toBeGreaterThanOrEqual(take.takenUntil);
      expect(
        await other.decideRunRequest(request.id, take.takeId, decision),
        'the cut take was replaced',
      ).toBe(false);
      expect(await other.decideRunRequest(request.id, retaken.got[0]!.takeId, decision)).toBe(true);
    });
  }, 60_000);
});

describe('EtcdStore run requests, stored data', () => {
  it('a request stored by an earlier version (no take fields, no data, no index) is found, taken and decided', async () => {
    await withFixture({}, async (fixture, keys, newStore) => {
      const store = await newStore();
      const old = { id: randomUUID(), job: 'old-job', requestedBy: 'cli', requestedAt: 1_000 };
      await fixture.admin
        .put(keys.runRequest(old.job, old.requestedAt, old.id))
        .value(JSON.stringify(old));
      expect(await store.getRunRequest(old.id), 'found without its index').toMatchObject({
        ...old,
        ...{ data: null, state: 'pending', takes: 0, takenBy: null, decidedAt: null },
      });
      const [take] = (await store.takeRunRequests(['old-job'], 'inst-a')) as [TakenRunRequest];
      expect(take).toMatchObject({ ...old, data: null, takes: 1 });
      expect(await store.decideRunRequest(old.id, take.takeId, decision)).toBe(true);
      expect(await store.getRunRequest(old.id)).toMatchObject({
        ...{ state: 'decided', fireAt: decision.fireAt, decidedBy: 'inst-a' },
      });
      expect(await store.takeRunRequests(['old-job'], 'inst-b')).toEqual([]);
    });
  });

  it('takes 70 requests of 60 KB data at once (over the 4 MiB gRPC answer: read in pages)', async () => {
    await withFixture({}, async (_fixture, _keys, newStore) => {
      const store = await newStore();
      const data = { blob: 'x'.repeat(60_000) };
      const ids: string[] = [];
      for (let i = 0; i < 70; i++) {
        ids.push((await store.requestRun({ job: 'big', requestedBy: 't', data })).id);
      }
      const taken = await store.takeRunRequests(['big'], 'inst-a');
      expect(taken.map((r) => r.id)).toEqual(ids);
      expect(taken.every((r) => (r.data as { blob: string }).blob.length === 60_000)).toBe(true);
      expect(await store.takeRunRequests(['big'], 'inst-b'), 'all held').toEqual([]);
    });
  }, 60_000);

  it('keeps a decided request an hour (store clock), then a take collects it and its index', async () => {
    const clock = new FakeClock(Date.UTC(2026, 0, 1));
    await withFixture({ clock }, async (fixture, _keys, newStore) => {
      const store = await newStore();
      const request = await store.requestRun({ job: 'kept', requestedBy: 't', data: [1] });
      const [take] = (await store.takeRunRequests(['kept'], 'inst-a')) as [TakenRunRequest];
      expect(await store.decideRunRequest(request.id, take.takeId, decision)).toBe(true);
      await clock.advance(DECIDED_RUN_REQUEST_KEEP_MS);
      await store.takeRunRequests(['kept'], 'inst-a');
      expect((await store.getRunRequest(request.id))?.state, 'kept for an hour').toBe('decided');
      await clock.advance(1);
      await store.takeRunRequests(['kept'], 'inst-a');
      expect(await store.getRunRequest(request.id), 'collected after the hour').toBeNull();
      const left = await fixture.admin.getAll().prefix(fixture.prefix).keys();
      // what is left is the request's `run` audit entry (`n/`, `j/<job>/`, `a/`): the audit log
      // outlives the request, bounded by its own retention
      const audit = ['a/', 'n/', 'j/'].map((kind) => `${fixture.prefix}${kind}`);
      const isAudit = (key: string) => audit.some((p) => key.startsWith(p));
      expect(
        left.filter((k) => !isAudit(k)),
        'request key and index key deleted',
      ).toEqual([]);
      expect(left.filter(isAudit)).toHaveLength(3);
    });
  });

  it('the watch wakes on a new request and on a release, not on a take or a decision', async () => {
    await withFixture({}, async (_fixture, _keys, newStore) => {
      const store = await newStore();
      const woken: string[] = [];
      const unsubscribe = store.watchRunRequests((job) => woken.push(job));
      try {
        // etcd delivers a watch's events in revision order: once `marker-n` is heard, every
        // put before it was heard (or filtered out).
        let markers = 0;
        const heardUpTo = async () => {
          const marker = `marker-${++markers}`;
          await waitFor(
            async () => {
              if (!woken.includes(marker)) {
                await store.requestRun({ job: marker, requestedBy: 't' });
              }
              return waitFor(() => woken.includes(marker), { timeoutMs: 1_000 }).catch(() => false);
            },
            { timeoutMs: 15_000, message: `the watch to hear ${marker}` },
          );
          const heard = woken.filter((job) => !job.startsWith('marker-'));
          woken.length = 0;
          return heard;
        };
        await heardUpTo();
        const request = await store.requestRun({ job: 'pushed', requestedBy: 't' });
        expect(await heardUpTo(), 'a new request wakes').toEqual(['pushed']);
        const [take] = (await store.takeRunRequests(['pushed'], 'inst-a')) as [TakenRunRequest];
        expect(await heardUpTo(), 'a take does not wake').toEqual([]);
        await store.releaseRunRequest(request.id, take.takeId);
        expect(await heardUpTo(), 'a release wakes').toEqual(['pushed']);
        const [again] = (await store.takeRunRequests(['pushed'], 'inst-a')) as [TakenRunRequest];
        await store.decideRunRequest(request.id, again.takeId, decision);
        expect(await heardUpTo(), 'a decision does not wake').toEqual([]);
      } finally {
        unsubscribe();
      }
    });
  }, 60_000);
});
