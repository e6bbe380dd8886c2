/**
 * Entry script of a process that registers no job: it asks the fleet to run a job now through a
 * `FleetClient` over the store (whose calls run in the parent, see `remote.ts`), writes a
 * `request` line to the ledger just before asking, tells the parent the request id and exits.
 * Started by `requestRunFromChild`.
 */
import { FleetClient } from '@fleetcron/core';
import { Ledger } from './ledger.js';
import { ParentChannel, type RemoteStoreInfo, remoteStore } from './remote.js';

/** The configuration of this script, passed as JSON in `argv[2]`. */
export interface RequesterConfig {
  job: string;
  /** Who asks (recorded as the run's `requestedBy`). */
  by: string;
  ledgerPath: string;
  store: RemoteStoreInfo;
}

async function main(): Promise<void> {
  const config = JSON.parse(process.argv[2] ?? '') as RequesterConfig;
  const parent = new ParentChannel(process, config.store.backend);
  const client = new FleetClient({ store: remoteStore(parent, config.store) });
  const ledger = new Ledger(config.ledgerPath);
  ledger.write({ kind: 'request', instance: config.by, job: config.job, requestedBy: config.by });
  const request = await client.requestRun(config.job, { by: config.by });
  ledger.close();
  process.send?.({ t: 'requested', id: request.id }, undefined, undefined, () => process.exit(0));
}

main().catch((error: unknown) => {
  process.stderr.write(
    `fleet requester child failed: ${error instanceof Error ? error.stack : String(error)}\n`,
  );
  process.exit(1);
});
