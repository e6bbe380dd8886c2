import { EventEmitter } from 'node:events';
import { MemoryLock, MemoryStore } from '@fleetcron/core';
import { hasFleetControl } from '@fleetcron/core/backend';
import { describe, expect, it } from 'vitest';
import {
  ParentChannel,
  remoteLock,
  remoteLockInfo,
  remoteStore,
  remoteStoreInfo,
  serveBackend,
} from '../../src/fleet/remote.js';
import { instanceRecord } from '../../src/index.js';
import { pollUntil } from '../../src/util.js';

/** Two ends of an in-memory IPC channel (what `fork()` gives a parent and its child). */
function channelPair() {
  const parentSide = new EventEmitter();
  const childSide = new EventEmitter();
  const deliver = (to: EventEmitter) => (message: unknown) => {
    queueMicrotask(() => to.emit('message', structuredClone(message)));
    return true;
  };
  return {
    parent: Object.assign(parentSide, { send: deliver(childSide) }),
    child: Object.assign(childSide, { send: deliver(parentSide) }),
  };
}

describe('the child-process proxies forward fleet control', () => {
  it('store: registry, run requests (with push), listJobs and pause with who; lock: mark', async () => {
    const store = new MemoryStore();
    const lock = new MemoryLock();
    const { parent, child } = channelPair();
    const stop = serveBackend(parent, lock, store);
    const channel = new ParentChannel(child, 'memory');
    const remote = remoteStore(channel, remoteStoreInfo(store));
    expect(hasFleetControl(remote), 'the remote store has every fleet method').toBe(true);

    await remote.heartbeat!(instanceRecord('child-1'));
    expect((await store.instances()).map((i) => i.instanceId)).toEqual(['child-1']);
    expect((await remote.instances!()).map((i) => i.instanceId)).toEqual(['child-1']);

    const woken: string[] = [];
    const unwatch = remote.watchRunRequests!((job) => woken.push(job));
    await pollUntil(
      async () => {
        await store.requestRun({ job: 'probe', requestedBy: 'test' });
        return woken.includes('probe');
      },
      { timeoutMs: 5000, message: 'the watch to be set up in the parent and push a request' },
    );
    await remote.requestRun!({ job: 'report', requestedBy: 'cli' });
    await pollUntil(() => woken.includes('report'), {
      timeoutMs: 5000,
      message: 'a push for report',
    });
    const taken = await remote.takeRunRequests!(['report'], 'child-1');
    expect(taken.map((r) => [r.job, r.requestedBy])).toEqual([['report', 'cli']]);
    unwatch();

    await remote.setPaused('report', true, { by: 'admin' });
    expect((await store.getJobState('report')).pausedBy).toBe('admin');
    expect((await remote.listJobs!()).map((j) => j.job)).toContain('report');
    await remote.leave!('child-1');
    expect(await store.instances()).toEqual([]);

    const rlock = remoteLock(channel, remoteLockInfo(lock));
    expect(typeof rlock.withdraw).toBe('function');
    const now = Date.now();
    await rlock.claim({ key: 'k', fireAt: now, owner: 'o', leaseMs: 1000, exclusive: true });
    expect((await rlock.inspect('k')).mark).toBe(now);
    stop();
  });
});
