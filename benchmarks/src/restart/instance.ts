/**
 * One instance of the restart scenario, in a worker process of its own: a real `Scheduler` on
 * its own lock and store connections with `jobs` cron jobs, each run appended to the instance's
 * ledger file with a synchronous `O_APPEND` write (a line written is on disk when the process is
 * killed with SIGKILL a moment later; a torn last line is counted by the judge).
 */
import { closeSync, openSync, writeSync } from 'node:fs';
import {
  type CatchUpPolicy,
  cron,
  type FleetcronEvent,
  type OverlapPolicy,
  Scheduler,
  subscribe,
} from '@fleetcron/core';
import { backendModules } from '../backends/index.js';
import type { BackendName, Connection } from '../backends/types.js';
import type { RestartLedgerLine } from './judge.js';

/** What the main process asks one restart instance to run. */
export interface RestartStart {
  type: 'restart-start';
  backend: BackendName;
  connection: Connection;
  /** Global index of the instance (`0 .. 3`); its ledger lines carry it. */
  instance: number;
  /** Incarnation of the fleet (0: before the outage, 1: after the restart). */
  generation: number;
  /** Job names are `<prefix>.<index>`; the same prefix in both generations. */
  prefix: string;
  jobs: number;
  /** The six-field cron expression every job runs on. */
  schedule: string;
  catchUp: CatchUpPolicy;
  overlap: OverlapPolicy;
  /** How long each run takes (a timer, not CPU), ms. */
  runMs: number;
  /** Whether the scheduler records history in the backend's store. */
  withStore: boolean;
  /** PostgreSQL pool size of the lock (and of the store). */
  poolSize: number;
  /** The ledger file this instance appends to. */
  ledgerFile: string;
}

/** What a restart instance answers once started. */
export interface RestartStarted {
  /** ms spent adding the jobs. */
  addMs: number;
  /** Resident set size right after `start()`, bytes. */
  rss: number;
  /** When `start()` was called, epoch ms (this host's clock, the backend's too). */
  startedAt: number;
}

/** Claim answers and skips this instance saw (diagnostics; the ledger is the verdict). */
export interface RestartStats {
  /** `claim.won`, `claim.busy`, `claim.failed`, `claim.lost:<reason>`, `fire.skipped:<reason>`, `store.failed`, … */
  events: Record<string, number>;
  /** Resident set size now, bytes. */
  rss: number;
  /** Peak resident set size of the process (`resourceUsage().maxRSS`), bytes. */
  maxRss: number;
}

let running: {
  scheduler: Scheduler;
  close: () => Promise<void>;
  stats: RestartStats['events'];
} | null = null;

/** Event types counted into {@link RestartStats.events}, with their reason where they have one. */
const COUNTED = new Set([
  'claim.won',
  'claim.lost',
  'claim.busy',
  'claim.failed',
  'fire.skipped',
  'fire.missed',
  'lease.lost',
  'store.failed',
]);

/** Opens the lock (and store), adds the jobs, starts the scheduler. */
export async function startRestartInstance(request: RestartStart): Promise<RestartStarted> {
  if (running) throw new Error('restart-start: this process already runs an instance');
  const module = backendModules[request.backend];
  const owned = await module.lock(request.connection, request.poolSize);
  const stores = module.store;
  if (request.withStore && !stores) throw new Error(`${module.name}: no store to record history`);
  const ownedStore =
    request.withStore && stores ? await stores.open(request.connection, request.poolSize) : null;
  const ledger = openSync(request.ledgerFile, 'a');
  const instanceId = `restart-g${request.generation}-i${request.instance}`;
  const events: RestartStats['events'] = {};
  const unsubscribe = subscribe((event: FleetcronEvent) => {
    if (event.instanceId !== instanceId || !COUNTED.has(event.type)) return;
    const reason = (event as { reason?: string }).reason;
    const name = reason ? `${event.type}:${reason}` : event.type;
    events[name] = (events[name] ?? 0) + 1;
  });
  const scheduler = new Scheduler({
    lock: owned.lock,
    ...(ownedStore ? { store: ownedStore.store } : {}),
    instanceId,
  });
  const trigger = cron(request.schedule);
  const began = performance.now();
  for (let job = 0; job < request.jobs; job++) {
    scheduler.add({
      name: `${request.prefix}.${job}`,
      trigger,
      catchUp: request.catchUp,
      overlap: request.overlap,
      run: async (ctx) => {
        const line: RestartLedgerLine = {
          job,
          fireAt: ctx.fireAt.getTime(),
          instance: request.instance,
          // the real wall clock (the backend runs on this host), not the fleet's estimate of it
          startedAt: Date.now(),
        };
        writeSync(ledger, `${JSON.stringify(line)}\n`);
        if (request.runMs > 0) await new Promise((resolve) => setTimeout(resolve, request.runMs));
      },
    });
  }
  const addMs = performance.now() - began;
  const startedAt = Date.now();
  scheduler.start();
  running = {
    scheduler,
    stats: events,
    async close() {
      unsubscribe();
      await scheduler.stop({ drainMs: 5_000 });
      await ownedStore?.close();
      await owned.close();
      closeSync(ledger);
    },
  };
  return { addMs, rss: process.memoryUsage().rss, startedAt };
}

/** What this process's instance has seen so far. */
export function restartStats(): RestartStats {
  return {
    events: { ...(running?.stats ?? {}) },
    rss: process.memoryUsage().rss,
    maxRss: process.resourceUsage().maxRSS * 1024,
  };
}

/** Stops the instance (the scenario's end; the outage itself is a SIGKILL). */
export async function stopRestartInstance(): Promise<void> {
  const instance = running;
  running = null;
  await instance?.close();
}
