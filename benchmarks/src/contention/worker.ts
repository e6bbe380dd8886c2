/**
 * Entry of a worker process: holds its share of the instances (each with its own connection)
 * and answers the main process's requests one at a time. Started by {@link WorkerPool}.
 */
import { backendModules } from '../backends/index.js';
import type { Claimer, OwnedLock } from '../backends/types.js';
import { restartStats, startRestartInstance, stopRestartInstance } from '../restart/instance.js';
import { canBatch, countingLock } from '../scale/counting-lock.js';
import { type FleetInstance, runFleet } from '../scale/fleet.js';
import { runSingleScale } from '../scale/single.js';
import { verifyCell } from '../scale/verify.js';
import type { Request, RequestEnvelope, ResponseEnvelope } from './protocol.js';
import { instanceOwner, runSlice, warm } from './slice.js';

let claimers: Claimer[] = [];
let fleet: FleetInstance[] = [];
let fleetOwned: OwnedLock[] = [];

async function closeAll(): Promise<void> {
  await Promise.allSettled(fleet.map((f) => f.elector?.close?.()));
  const closing = [...claimers.map((c) => c.close()), ...fleetOwned.map((o) => o.close())];
  claimers = [];
  fleet = [];
  fleetOwned = [];
  await Promise.allSettled(closing);
}

async function handle(request: Request): Promise<unknown> {
  switch (request.type) {
    case 'prepare': {
      await closeAll();
      const module = backendModules[request.backend];
      claimers = await Promise.all(
        request.instances.map((i) =>
          module.claimer(request.connection, request.variant, instanceOwner(i)),
        ),
      );
      await warm(claimers, request.key, request.base);
      return { ready: true };
    }
    case 'go':
      return runSlice(claimers, request.run);
    case 'close':
      await closeAll();
      return { closed: true };
    case 'scale-open': {
      await closeAll();
      const module = backendModules[request.backend];
      fleetOwned = await Promise.all(
        request.instances.map(() => module.lock(request.connection, request.poolSize)),
      );
      fleet = fleetOwned.map((o, i) => ({
        index: request.instances[i] as number,
        counted: countingLock(o.lock),
        ...(o.elector ? { elector: o.elector() } : {}),
      }));
      // warm each connection (scripts, lease pool, clock estimate) before the first cell
      await Promise.all(
        fleetOwned.map(async ({ lock }, i) => {
          const result = await lock.claim({
            key: `scale-warm-${request.instances[i]}-${process.pid}`,
            fireAt: Date.now(),
            owner: `scale-i${request.instances[i]}`,
            leaseMs: 30_000,
            exclusive: false,
          });
          if (result.status === 'won') await lock.release(result.lease);
        }),
      );
      const first = fleetOwned[0]?.lock;
      return {
        ready: true,
        canBatch: first ? canBatch(first) : false,
        hasElector: fleet.length > 0 && fleet.every((f) => f.elector),
      };
    }
    case 'scale-go':
      return runFleet(fleet, request.cell);
    case 'scale-verify': {
      const lock = fleetOwned[0]?.lock;
      if (!lock)
        throw new Error('scale-verify: this process holds no lock (send scale-open first)');
      return verifyCell(lock, request.cell, new Map(request.ranBy), new Set(request.failedJobs));
    }
    case 'scale':
      return runSingleScale(request.jobs, request.idleSeconds);
    case 'restart-start':
      return startRestartInstance(request);
    case 'restart-stats':
      return restartStats();
    case 'restart-stop':
      await stopRestartInstance();
      return { stopped: true };
  }
}

process.on('message', (message: RequestEnvelope) => {
  void handle(message.request).then(
    (value) => send({ id: message.id, ok: true, value }),
    (error: unknown) =>
      send({
        id: message.id,
        ok: false,
        error: error instanceof Error ? (error.stack ?? error.message) : String(error),
      }),
  );
});

function send(envelope: ResponseEnvelope): void {
  process.send?.(envelope);
}

process.on('disconnect', () => {
  void Promise.allSettled([closeAll(), stopRestartInstance()]).finally(() => process.exit(0));
});
