/**
 * Entry script of a fleet instance in its own process (started by `startInstanceChild`). It runs
 * one instance (the factory named in its config) whose lock and store calls go to the parent
 * over IPC, writes the ledger, and at its freeze point writes `FROZEN <point>` to stdout and
 * blocks synchronously on a read of stdin until the parent writes one byte. The parent SIGSTOPs
 * it while it blocks there, so the freeze is real and pinned to the point.
 */
import { readSync, writeSync } from 'node:fs';
import { type JobDefinition, realClock, subscribe } from '@fleetcron/core';
import { remoteElector } from '../elector/remote-elector.js';
import {
  type ChildJob,
  childTrigger,
  expandCopies,
  FROZEN_MARKER,
  type InstanceChildConfig,
} from './child-config.js';
import { loadInstanceFactory } from './instance.js';
import {
  FreezeTrap,
  type Instrumentation,
  instrumentLock,
  instrumentStore,
  ledgerJob,
} from './instrument.js';
import { Ledger } from './ledger.js';
import { ParentChannel, remoteLock, remoteStore } from './remote.js';

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
  const { name, workMs, overlap, catchUp, onHolderLost, shards } = job;
  const run = ledgerJob(instrumentation, workMs);
  const policies = {
    ...(overlap === undefined ? {} : { overlap }),
    ...(catchUp === undefined ? {} : { catchUp }),
    ...(onHolderLost === undefined ? {} : { onHolderLost }),
    ...(shards === undefined ? {} : { shards }),
  };
  return { name, trigger: childTrigger(job), run, ...policies } as JobDefinition;
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
  const parent = new ParentChannel(process, config.lock.backend);
  const instrumentation = { ledger, instance: instanceId, trap };
  const factory = await loadInstanceFactory(config.instanceModule);
  const { elector, leaderTtlMs, shardGraceMs } = config;
  if (elector) writeLeaderLines(ledger, instanceId);
  const instance = factory({
    instanceId,
    lock: instrumentLock(remoteLock(parent, config.lock), instrumentation),
    ...(config.store ? { store: instrumentStore(remoteStore(parent, config.store), trap) } : {}),
    clock: realClock,
    leaseMs: config.leaseMs,
    ...(config.heartbeatMs === undefined ? {} : { heartbeatMs: config.heartbeatMs }),
    ...(elector
      ? { leader: { elector: remoteElector(parent, elector), ttlMs: leaderTtlMs ?? 15_000 } }
      : {}),
    ...(shardGraceMs === undefined ? {} : { shardGraceMs }),
    jobs: config.jobs.flatMap(expandCopies).map((job) => childJob(job, instrumentation)),
  });
  const start = () => {
    instance.start();
    ledger.write({ kind: 'started', instance: instanceId });
  };
  process.on('message', (message) => {
    if ((message as { t?: string } | null)?.t === 'go') {
      start();
      process.send?.({ t: 'started' });
      return;
    }
    if ((message as { t?: string } | null)?.t !== 'stop') return;
    instance.stop().then(
      () => {
        ledger.close();
        process.send?.({ t: 'stopped' }, undefined, undefined, () => process.exit(0));
      },
      (error: unknown) => {
        process.stderr.write(`stop() rejected: ${String(error)}\n`);
        process.exit(1);
      },
    );
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
