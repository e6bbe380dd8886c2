import {
  BackendUnavailableError,
  type CampaignRequest,
  type Elector,
  type ElectorCapabilities,
  type Lock,
  type Store,
} from '@fleetcron/core';
import { type ParentChannel, serveBackend } from '../fleet/remote.js';

/**
 * An elector used from a child process through its IPC channel, on the fleet suite's remote
 * call plumbing (`fleet/remote.ts`): the child's candidate calls it, the parent runs each step on
 * its own client of the backend. A SIGSTOPped child then freezes like a real leader: it sends no
 * renewal and sees every answer late.
 */

/** What the child needs to know about the parent's elector up front. */
export interface RemoteElectorInfo {
  backend: string;
  capabilities: ElectorCapabilities;
}

/** Parent side: answers the child's elector steps with `elector`; returns a stop function. */
export function serveElector(
  child: Parameters<typeof serveBackend>[0],
  elector: Elector,
): () => void {
  // The plumbing routes calls by target; the elector travels as the `lock` target.
  return serveBackend(child, elector as unknown as Lock, {} as Store);
}

/** Child side: an elector whose steps run in the parent. */
export function remoteElector(parent: ParentChannel, info: RemoteElectorInfo): Elector {
  return {
    backend: info.backend,
    capabilities: info.capabilities,
    campaign({ signal, ...request }: CampaignRequest) {
      if (signal?.aborted) {
        return Promise.reject(new BackendUnavailableError(info.backend, 'campaign', signal.reason));
      }
      return parent.call('lock', 'campaign', [request]);
    },
    renew: (term, ttlMs) => parent.call('lock', 'renew', [term, ttlMs]),
    resign: (term) => parent.call('lock', 'resign', [term]),
    leader: (election) => parent.call('lock', 'leader', [election]),
  };
}
