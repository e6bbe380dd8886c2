/**
 * Entry script of a fleet instance in its own process (started by `startInstanceChild`). It runs
 * one instance (the factory named in its config) whose lock and store calls go to the parent
 * over IPC, writes the ledger, and at its freeze point writes `FROZEN <point>` to stdout and
 * blocks synchronously on a read of stdin until the parent writes one byte. The parent SIGSTOPs
 * it while it blocks there, so the freeze is real and pinned to the point.
 */
import { readSync, writeSync } from 'node:fs';
import {
  fleetWatchdog,
  type JobDefinition,
  type Lock,
  realClock,
  type Store,
  subscribe,
} from '@fleetcron/core';
import { webhookNotifier } from '@fleetcron/notify';
import { emailNotifier } from '@fleetcron/notify-email';
import { remoteElector } from '../elector/remote-elector.js';
import type { ProcessClient } from '../types.js';
import {
  type ChildBackend,
  type ChildJob,
  type ChildWatchdog,
  childTrigger,
  expandCopies,
  FROZEN_MARKER,
  type InstanceChildConfig,
} from './child-config.js';
import { loadInstanceFactory } from './instance.js';
import {
  afterTakeStore,
  FreezeTrap,
  type Instrumentation,
  instrumentLock,
  instrumentStore,
  ledgerJob,
} from './instrument.js';
import { Ledger } from './ledger.js';
import {
  ParentChannel,
  type RemoteLockInfo,
  type RemoteStoreInfo,
  remoteLock,
  remoteStore,
} from './remote.js';

/** Blocks the whole process until one byte arrives on stdin (the parent's "go"). */
function waitForGo(): void {
  const byte = Buffer.alloc(1);
  const pause = new Int32Array(new SharedArrayBuffer(4));
  for (;;) {
    try {
      if (readSync(0, byte, 0, 1, null) === 1) return;
      throw new Error('stdin closed while frozen: the parent is gone');
    } catch (error) {
      if ((error as { code?: string }).code !== 'EAGAIN') throw error;
      Atomics.wait(pause, 0, 0, 5); // stdin is non-blocking: poll, still without yielding
    }
  }
}

/** The job definition of `job`: the ledger job with the job's policies. */
function childJob(job: ChildJob, instrumentation: Instrumentation): JobDefinition {
  const { name, workMs, overlap, catchUp, onHolderLost, shards, fails } = job;
  const run = ledgerJob(instrumentation, workMs, fails);
  const policies = {
    ...(overlap === undefined ? {} : { overlap }),
    ...(catchUp === undefined ? {} : { catchUp }),
    ...(onHolderLost === undefined ? {} : { onHolderLost }),
    ...(shards === undefined ? {} : { shards }),
  };
  return { name, trigger: childTrigger(job), run, ...policies } as JobDefinition;
}

/**
 * The fleet watchdog on `store`, notifying the webhook at `watchdog.url` with this instance named
 * in a header, or, for an `smtp://` URL, e-mailing it from an address that names this instance.
 */
function watchdogJob(watchdog: ChildWatchdog, store: Store, instanceId: string): JobDefinition {
  const notifier = watchdog.url.startsWith('smtp://')
    ? emailNotifier({
        transport: watchdog.url,
        from: `${instanceId}@fleetcron.test`,
        to: 'ops@fleetcron.test',
      })
    : webhookNotifier({
        url: watchdog.url,
        headers: { 'x-fleetcron-test-instance': instanceId },
      });
  return fleetWatchdog({
    store,
    notifiers: [notifier],
    every: watchdog.everyMs,
    settleMs: watchdog.settleMs,
    delivery: { attempts: 2, timeoutMs: 60_000, backoff: { initialMs: 200, maxMs: 200 } },
  });
}

/** Opens the client `client` describes, in this process. */
async function openOwn<T>(client: ProcessClient): Promise<T> {
  const module = (await import(client.module)) as Record<string, unknown>;
  const open = module[client.exportName];
  if (typeof open !== 'function') {
    throw new Error(`${client.module} has no function export '${client.exportName}'`);
  }
  return (await open(client.config)) as T;
}

/** The parent's channel, made on the first backend that needs it. */
let channel: ParentChannel | undefined;
const parent = (backend: string) => {
  channel ??= new ParentChannel(process, backend);
  return channel;
};

/** The lock of `backend`: the parent's over IPC, or the child's own. */
async function childLock(backend: ChildBackend<RemoteLockInfo>): Promise<Lock> {
  if ('own' in backend) return openOwn<Lock>(backend.own);
  return remoteLock(parent(backend.remote.backend), backend.remote);
}

/** The store of `backend`: the parent's over IPC, or the child's own. */
async function childStore(backend: ChildBackend<RemoteStoreInfo>): Promise<Store> {
  if ('own' in backend) return openOwn<Store>(backend.own);
  return remoteStore(parent(backend.remote.backend), backend.remote);
}

/** Writes every `leader.changed` event of `instanceId` to the ledger (a `leader` line). */
function writeLeaderLines(ledger: Ledger, instanceId: string): void {
  subscribe((event) => {
    if (event.type !== 'leader.changed' || event.instanceId !== instanceId) return;
    ledger.write({
      kind: 'leader',
      instance: instanceId,
      term: event.term,
      isLeader: event.isLeader,
    });
  });
}

async function main(): Promise<void> {
  const config = JSON.parse(process.argv[2] ?? '') as InstanceChildConfig;
  const { instanceId, point } = config;
  const ledger = new Ledger(config.ledgerPath);
  const trap =
    point === null
      ? undefined
      : new FreezeTrap(point, instanceId, ledger, () => {
          writeSync(1, `${FROZEN_MARKER} ${point}\n`);
          waitForGo();
        });
  const lock = await childLock(config.lock);
  let stopAndExit: () => void = () => {};
  const opened = config.store ? await childStore(config.store) : undefined;
  const { afterTake } = config;
  const store =
    opened && afterTake
      ? afterTakeStore(opened, afterTake, {
          ledger,
          instance: instanceId,
          stop: () => stopAndExit(),
        })
      : opened;
  const instrumentation = { ledger, instance: instanceId, trap };
  const factory = await loadInstanceFactory(config.instanceModule);
  const { elector, leaderTtlMs, shardGraceMs } = config;
  if (elector) writeLeaderLines(ledger, instanceId);
  const instance = factory({
    instanceId,
    lock: instrumentLock(lock, instrumentation),
    ...(store ? { store: instrumentStore(store, trap) } : {}),
    clock: realClock,
    leaseMs: config.leaseMs,
    ...(config.heartbeatMs === undefined ? {} : { heartbeatMs: config.heartbeatMs }),
    ...(elector
      ? {
          leader: {
            elector: remoteElector(parent(elector.backend), elector),
            ttlMs: leaderTtlMs ?? 15_000,
          },
        }
      : {}),
    ...(shardGraceMs === undefined ? {} : { shardGraceMs }),
    ...(config.runRequestLeaseMs === undefined
      ? {}
      : { runRequestLeaseMs: config.runRequestLeaseMs }),
    ...(config.runRequestPollMs === undefined ? {} : { runRequestPollMs: config.runRequestPollMs }),
    jobs: [
      ...config.jobs.flatMap(expandCopies).map((job) => childJob(job, instrumentation)),
      ...(config.watchdog && store ? [watchdogJob(config.watchdog, store, instanceId)] : []),
    ],
  });
  const start = () => {
    instance.start();
    ledger.write({ kind: 'started', instance: instanceId });
  };
  stopAndExit = () => {
    instance.stop().then(
      async () => {
        await Promise.allSettled([lock.close?.(), store?.close?.()]);
        ledger.close();
        process.send?.({ t: 'stopped' }, undefined, undefined, () => process.exit(0));
      },
      (error: unknown) => {
        const text = error instanceof Error ? (error.stack ?? String(error)) : String(error);
        process.stderr.write(`stop() rejected: ${text}\n`);
        process.exit(1);
      },
    );
  };
  process.on('message', (message) => {
    if ((message as { t?: string } | null)?.t === 'go') {
      start();
      process.send?.({ t: 'started' });
      return;
    }
    if ((message as { t?: string } | null)?.t === 'stop') stopAndExit();
  });
  if (!config.startOnGo) start();
  process.send?.({ t: 'ready' });
}

main().catch((error: unknown) => {
  process.stderr.write(
    `fleet instance child failed: ${error instanceof Error ? error.stack : String(error)}\n`,
  );
  process.exit(1);
});
