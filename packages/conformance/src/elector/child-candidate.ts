/**
 * Entry script of an election participant in its own process (started by
 * `startCandidateChild`). Its elector steps go to the parent over IPC; it writes the ledger.
 * The parent SIGSTOPs or SIGKILLs it; on `{ t: 'stop' }` it resigns and exits.
 */
import { ParentChannel } from '../fleet/remote.js';
import { loadCandidateFactory } from './candidate-module.js';
import type { CandidateChildConfig } from './child-config.js';
import { ElectionLedger } from './election-ledger.js';
import { Participant } from './participant.js';
import { remoteElector } from './remote-elector.js';

async function main(): Promise<void> {
  const config = JSON.parse(process.argv[2] ?? '') as CandidateChildConfig;
  const ledger = new ElectionLedger(config.ledgerPath);
  const parent = new ParentChannel(process, config.elector.backend);
  const participant = new Participant({
    id: config.id,
    election: config.election,
    ttlMs: config.ttlMs,
    campaignIntervalMs: config.campaignIntervalMs,
    elector: remoteElector(parent, config.elector),
    ledger,
    factory: await loadCandidateFactory(config.candidateModule),
  });
  process.on('message', (message) => {
    if ((message as { t?: string } | null)?.t !== 'stop') return;
    participant.stop().then(() => {
      ledger.close();
      process.send?.({ t: 'stopped' }, undefined, undefined, () => process.exit(0));
    });
  });
  participant.start();
  process.send?.({ t: 'ready' });
}

main().catch((error: unknown) => {
  process.stderr.write(
    `election child failed: ${error instanceof Error ? error.stack : String(error)}\n`,
  );
  process.exit(1);
});
