import type { CandidateModule } from './candidate-module.js';
import type { RemoteElectorInfo } from './remote-elector.js';

/** The configuration of `child-candidate.ts`, passed as JSON in `argv[2]`. */
export interface CandidateChildConfig {
  id: string;
  election: string;
  ttlMs: number;
  campaignIntervalMs?: number;
  ledgerPath: string;
  candidateModule: CandidateModule;
  elector: RemoteElectorInfo;
}
