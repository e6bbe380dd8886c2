import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  type Execution,
  type JobDefinition,
  type LockCapabilities,
  MemoryStore,
  realClock,
} from '@fleetcron/core';
import type { FleetConformanceOptions, LockFixture } from '../types.js';
import { leaseFor, using } from '../util.js';
import { type ChildJob, childTrigger } from './child-config.js';
import { type InstanceChild, startInstanceChild } from './child-process.js';
import {
  type FleetInstance,
  type FleetInstanceFactory,
  type FleetInstanceModule,
  loadInstanceFactory,
  schedulerInstanceModule,
} from './instance.js';
import { instrumentLock, instrumentStore, ledgerJob } from './instrument.js';
import { formatLedger } from './judge.js';
import { Ledger, type LedgerEntry } from './ledger.js';

/**
 * What every fleet-control scenario works with: the backend's lock fixture, one store shared by
 * the fleet (a `MemoryStore` in the test process; child processes reach it over IPC), an
 * append-only ledger, the job lease and the instance factory under test.
 */
export interface ControlSetup {
  options: FleetConformanceOptions;
  fixture: LockFixture;
  module: FleetInstanceModule;
  factory: FleetInstanceFactory;
  ledger: Ledger;
  store: MemoryStore;
  /** What the fixture's lock declares. */
  capabilities: LockCapabilities;
  leaseMs: number;
  scale: number;
  /** Unique per scenario run: suffix of instance ids. */
  tag: string;
}

/** Heartbeat interval of the fleet-control scenarios' instances, ms. */
export const CONTROL_HEARTBEAT_MS = 1000;

/**
 * Runs `body` with a fresh fixture, store and ledger; always cleans up. A failure message gets
 * the ledger appended.
 */
export async function withControlSetup(
  options: FleetConformanceOptions,
  body: (setup: ControlSetup) => Promise<void>,
): Promise<void> {
  const module = options.instance ?? schedulerInstanceModule;
  const factory = await loadInstanceFactory(module);
  const tag = randomUUID().slice(0, 8);
  const ledger = new Ledger(join(tmpdir(), `fleetcron-control-${tag}.jsonl`));
  try {
    await using(options.create, async (fixture) => {
      const capabilities = (await fixture.newLock()).capabilities;
      await body({
        options,
        fixture,
        module,
        factory,
        ledger,
        store: new MemoryStore(),
        capabilities,
        leaseMs: leaseFor(capabilities, options.leaseMs ?? 2000),
        scale: options.timeScale ?? 1,
        tag,
      });
    });
  } catch (error) {
    if (error instanceof Error && !error.message.includes('the ledger:')) {
      error.message += `\nthe ledger:\n${formatLedger(ledger.read())}`;
    }
    throw error;
  } finally {
    ledger.close();
    rmSync(ledger.path, { force: true });
  }
}

/** The job definition of `job` in the test process (the same shape children build). */
export function controlJob(setup: ControlSetup, instanceId: string, job: ChildJob): JobDefinition {
  const { name, workMs, overlap, catchUp, onHolderLost } = job;
  const run = ledgerJob({ ledger: setup.ledger, instance: instanceId }, workMs);
  return {
    name,
    trigger: childTrigger(job),
    run,
    ...(overlap === undefined ? {} : { overlap }),
    ...(catchUp === undefined ? {} : { catchUp }),
    ...(onHolderLost === undefined ? {} : { onHolderLost }),
  } as JobDefinition;
}

/** An instance in the test process, on its own lock client, writing the ledger. */
export async function localInstance(
  setup: ControlSetup,
  instanceId: string,
  jobs: ChildJob[],
): Promise<FleetInstance> {
  const instrumentation = { ledger: setup.ledger, instance: instanceId };
  const instance = setup.factory({
    instanceId,
    lock: instrumentLock(await setup.fixture.newLock(), instrumentation),
    store: instrumentStore(setup.store),
    clock: realClock,
    leaseMs: setup.leaseMs,
    heartbeatMs: CONTROL_HEARTBEAT_MS,
    jobs: jobs.map((job) => controlJob(setup, instanceId, job)),
  });
  return {
    start() {
      instance.start();
      setup.ledger.write({ kind: 'started', instance: instanceId });
    },
    async stop() {
      await instance.stop();
      setup.ledger.write({ kind: 'stopped', instance: instanceId });
    },
  };
}

/**
 * Instances in child processes (each on its own lock client of the fixture, all on the shared
 * store), started in parallel. `startOnGo`: they wait for {@link InstanceChild.go}.
 */
export function childInstances(
  setup: ControlSetup,
  ids: string[],
  jobs: ChildJob[],
  startOnGo: boolean,
): Promise<InstanceChild[]> {
  return Promise.all(
    ids.map(async (instanceId) =>
      startInstanceChild(
        {
          instanceId,
          leaseMs: setup.leaseMs,
          jobs,
          point: null,
          startOnGo,
          heartbeatMs: CONTROL_HEARTBEAT_MS,
          ledgerPath: setup.ledger.path,
          instanceModule: setup.module,
        },
        await setup.fixture.newLock(),
        setup.store,
        60_000 * setup.scale,
      ),
    ),
  );
}

/** Stops every child (killing the ones that do not exit) and returns their failures. */
export async function stopChildren(children: InstanceChild[], scale: number): Promise<string[]> {
  const codes = await Promise.all(children.map((c) => c.stop(20_000 * scale)));
  const failures: string[] = [];
  codes.forEach((code, i) => {
    if (code !== 0) failures.push(`child ${i} exited ${code}:\n${children[i]!.output()}`);
  });
  await Promise.all(children.map((c) => c.kill()));
  return failures;
}

/** Start lines of `job`, grouped by fire time. */
export function startsByFire(entries: LedgerEntry[], job: string): Map<number, LedgerEntry[]> {
  const byFire = new Map<number, LedgerEntry[]>();
  for (const e of entries) {
    if (e.kind !== 'start' || e.job !== job) continue;
    const fireAt = e.fireAt ?? 0;
    byFire.set(fireAt, [...(byFire.get(fireAt) ?? []), e]);
  }
  return byFire;
}

/** Every execution of `job` in the store (all pages). */
export async function allExecutions(store: MemoryStore, job: string): Promise<Execution[]> {
  const executions: Execution[] = [];
  let cursor: string | undefined;
  do {
    const page = await store.history(job, { limit: 500, ...(cursor ? { cursor } : {}) });
    executions.push(...page.executions);
    cursor = page.nextCursor ?? undefined;
  } while (cursor);
  return executions;
}

/** `fireAt` as a readable time for messages. */
export const at = (fireAt: number | undefined) => new Date(fireAt ?? 0).toISOString().slice(11, 23);

/** One line per execution, for failure messages. */
export function formatExecutions(executions: Execution[]): string {
  return executions
    .map(
      (e) =>
        `${at(e.fireAt)} ${e.instanceId} token ${e.token} ${e.status}${e.reason ? ` (${e.reason})` : ''}${e.requestedBy ? ` by ${e.requestedBy}` : ''}`,
    )
    .join('\n');
}
