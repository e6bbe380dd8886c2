/**
 * Entry of a worker process: holds its share of the instances (each with its own connection)
 * and answers the main process's requests one at a time. Started by {@link WorkerPool}.
 */
import { backendModules } from '../backends/index.js';
import type { Claimer, OwnedLock } from '../backends/types.js';
import { type FleetInstance, runFleet } from '../scale/fleet.js';
import { runSingleScale } from '../scale/single.js';
import type { Request, RequestEnvelope, ResponseEnvelope } from './protocol.js';
import { instanceOwner, runSlice, warm } from './slice.js';

let claimers: Claimer[] = [];
let fleet: FleetInstance[] = [];

async function closeAll(): Promise<void> {
  const closing = [...claimers.map((c) => c.close()), ...fleet.map((f) => f.owned.close())];
  claimers = [];
  fleet = [];
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
    case 'fleet-prepare': {
      await closeAll();
      const module = backendModules[request.backend];
      const owned: OwnedLock[] = await Promise.all(
        request.instances.map(() => module.lock(request.connection, request.poolSize)),
      );
      fleet = owned.map((o, i) => ({ index: request.instances[i] as number, owned: o }));
      // warm each connection (scripts, lease pool) before the fire
      await Promise.all(
        fleet.map(async ({ index, owned: { lock } }) => {
          const result = await lock.claim({
            key: `fleet-warm-${index}-${process.pid}`,
            fireAt: Date.now(),
            owner: `fleet-i${index}`,
            leaseMs: 30_000,
            exclusive: false,
          });
          if (result.status === 'won') await lock.release(result.lease);
        }),
      );
      return { ready: true };
    }
    case 'fleet-go':
      try {
        return await runFleet(fleet, request);
      } finally {
        await closeAll();
      }
    case 'scale':
      return runSingleScale(request.jobs, request.idleSeconds);
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
  void closeAll().finally(() => process.exit(0));
});
