import { expect } from 'vitest';
import { hostMonotonicMs } from '../fleet/ledger.js';
import { delay, pollUntil } from '../util.js';
import { readingElectorCapabilitiesForFaults } from './capabilities.js';
import type { Participant } from './participant.js';
import { type Election, withElection } from './setup.js';
import type { ElectorFaultScenario, ElectorFaults, ElectorScenarioOptions } from './types.js';

/**
 * Two candidates lead and follow on the dedicated server; `fault` breaks it; then someone must
 * lead (and act) again within a bound, terms keep increasing, no crash.
 */
async function leadThrough(election: Election, fault: () => Promise<void>): Promise<void> {
  const { ledger, ttlMs, scale } = election;
  const participants: Participant[] = [];
  for (const id of ['first', 'second']) {
    const p = await election.participant(id);
    p.start();
    participants.push(p);
  }
  await pollUntil(() => ledger.read().some((e) => e.kind === 'act'), {
    timeoutMs: 20_000 * scale,
    message: 'a leader to act before the fault',
  });
  await delay(ttlMs / 2);
  await fault();
  const after = hostMonotonicMs();
  const acted = await pollUntil(
    () => ledger.read().find((e) => e.kind === 'act' && e.mono > after + ttlMs),
    {
      timeoutMs: (ttlMs * 4 + 30_000) * scale,
      message: 'a leader to act again a TTL after the fault',
    },
  );
  expect(acted.term, 'the leader after the fault has a term').toBeGreaterThan(0);
  await delay(500);
}

/** 10. The server restarts under a leader. */
export const serverRestart: ElectorFaultScenario = {
  title:
    'the server restarts: a leader acts again soon after, terms still increase (and, when durable, never two leaders)',
  timeoutMs: 120_000,
  run: (options: ElectorScenarioOptions, faults: ElectorFaults) =>
    withElection(
      options,
      { abortBeforeNext: false, oneLeader: options.capabilities.durable },
      (election) => leadThrough(election, () => faults.server.restart()),
      () => faults.create(),
    ),
};

/** 11. The server drops every client connection. */
export const connectionsDropped: ElectorFaultScenario = {
  title:
    'the server drops every connection: a leader acts again soon after, one leader at a time, terms increase',
  timeoutMs: 120_000,
  run: (options: ElectorScenarioOptions, faults: ElectorFaults) =>
    withElection(
      options,
      { abortBeforeNext: false, oneLeader: true },
      (election) => leadThrough(election, () => faults.server.dropConnections()),
      () => faults.create(),
    ),
};

/** The fault scenarios, in registration order. */
export const electorFaultScenarios = readingElectorCapabilitiesForFaults({
  serverRestart,
  connectionsDropped,
} as const satisfies Record<string, ElectorFaultScenario>);
