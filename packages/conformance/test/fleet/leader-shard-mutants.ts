import type {
  CampaignRequest,
  ClaimRequest,
  ClaimResult,
  Elector,
  JobDefinition,
  Lock,
} from '@fleetcron/core';
import { type FleetInstanceFactory, schedulerInstance } from '../../src/fleet/instance.js';

/**
 * Mutant fleets for the self-test of the leader-mode and sharded-fire scenarios: the real
 * `Scheduler`, with one safeguard broken by wrapping what it is given. Each scenario must fail on
 * its mutant. Loaded by URL (children import this module too).
 */

/** Every claim wins: a busy or lost answer is replaced by a lease of our own making. */
function everyClaimWins(inner: Lock): Lock {
  const win = (request: ClaimRequest, result: ClaimResult): ClaimResult => {
    if (result.status === 'won') return result;
    const { key, fireAt, owner, leaseMs, exclusive } = request;
    const lease = { key, fireAt, owner, exclusive, token: fireAt, expiresAt: Date.now() + leaseMs };
    return { status: 'won', lease };
  };
  const lock: Lock = Object.create(inner);
  lock.claim = async (request) => win(request, await inner.claim(request));
  if (inner.claimMany) {
    const claimMany = inner.claimMany.bind(inner);
    lock.claimMany = async (requests, options) =>
      (await claimMany(requests, options)).map((result, i) => win(requests[i]!, result));
  }
  return lock;
}

/** Every candidate is elected at once (a new term each time, increasing across processes). */
function everyoneLeads(inner: Elector): Elector {
  let last = 0;
  const term = (request: Pick<CampaignRequest, 'election' | 'id' | 'ttlMs'>) => {
    last = Math.max(last + 1, Date.now() * 1000 + (process.pid % 1000));
    const { election, id, ttlMs } = request;
    return { election, id, term: last, expiresAt: Date.now() + ttlMs };
  };
  return {
    backend: inner.backend,
    capabilities: inner.capabilities,
    campaign: async (request) => ({ status: 'elected', leader: term(request) }),
    renew: async (leader, ttlMs) => ({ ...leader, expiresAt: Date.now() + ttlMs }),
    resign: async () => true,
    leader: async () => null,
  };
}

/** lm1: in leader mode, every instance leads and every claim wins: followers run fires too. */
export const everyoneLeadsEveryClaimWins: FleetInstanceFactory = (deps) => {
  const leader = deps.leader && { ...deps.leader, elector: everyoneLeads(deps.leader.elector) };
  return schedulerInstance({ ...deps, lock: everyClaimWins(deps.lock), ...(leader && { leader }) });
};

/** How long the other instances' part claims are held back by {@link partsOnOne}, ms. */
const HELD_BACK_MS = 10_000;

/**
 * sh1: every part is taken by one instance (`shard-0-…`): the others' part claims reach the lock
 * only after that instance has claimed every part as a fallback.
 */
export const partsOnOne: FleetInstanceFactory = (deps) => {
  if (deps.instanceId.startsWith('shard-0-')) return schedulerInstance(deps);
  const isPart = (request: ClaimRequest) => request.key.includes('\u001Fpart\u001F');
  const later = <T>(requests: readonly ClaimRequest[], send: () => Promise<T>): Promise<T> =>
    requests.some(isPart)
      ? new Promise((resolve) => setTimeout(resolve, HELD_BACK_MS)).then(send)
      : send();
  const lock: Lock = Object.create(deps.lock);
  lock.claim = (request) => later([request], () => deps.lock.claim(request));
  const { claimMany } = deps.lock;
  if (claimMany) {
    lock.claimMany = (requests, options) =>
      later(requests, () => claimMany.call(deps.lock, requests, options));
  }
  return schedulerInstance({ ...deps, lock });
};

/** ea1: a broadcast job is run as a plain one: each fire runs on one instance only. */
export const eachAsPlain: FleetInstanceFactory = (deps) => {
  const jobs = deps.jobs.map((job): JobDefinition => {
    const { shards: _shards, ...plain } = job;
    return plain;
  });
  return schedulerInstance({ ...deps, jobs });
};
