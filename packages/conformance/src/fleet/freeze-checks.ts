import type { Store } from '@fleetcron/core';
import { expect } from 'vitest';
import type { FreezePoint } from './instrument.js';
import { formatLedger, ledgerViolations } from './judge.js';
import type { LedgerEntry } from './ledger.js';

/** What a freeze scenario hands to {@link assertFreezeOutcome} once every instance stopped. */
export interface FreezeOutcome {
  point: FreezePoint;
  entries: LedgerEntry[];
  store: Store;
  job: string;
  leaseMs: number;
  frozen: string;
  /** Instances other than the frozen one. */
  others: string[];
  /**
   * Where the takeover must have started: `during` the freeze (the frozen process alone stood
   * still) or `after` it (the whole process was blocked, so nobody could take over meanwhile).
   */
  takeover: 'during' | 'after';
}

/** The frozen holder's `freeze` and `thaw` lines; fails when it never froze or never thawed. */
export function freezeLines(entries: LedgerEntry[], frozen: string) {
  const freeze = entries.find((e) => e.kind === 'freeze' && e.instance === frozen);
  const thaw = entries.find((e) => e.kind === 'thaw' && e.instance === frozen);
  expect(freeze, `${frozen} froze`).toBeDefined();
  expect(thaw, `${frozen} was let go`).toBeDefined();
  return { freeze: freeze!, thaw: thaw! };
}

/**
 * The assertions of every freeze scenario, from the ledger and the store's history:
 * the safety rules of {@link ledgerViolations} for every instance; another instance took the job
 * over with a higher token; a holder frozen before its job never started it; a holder frozen
 * inside its job had its signal aborted and is recorded `lease_lost`.
 */
export async function assertFreezeOutcome(outcome: FreezeOutcome): Promise<void> {
  const { entries, frozen, point, leaseMs } = outcome;
  const { executions } = await outcome.store.history(outcome.job, { limit: 1000 });
  const ledger = formatLedger(entries);
  const violations = ledgerViolations({ entries, leaseMs, executions });
  expect(
    violations,
    `safety rules broken:\n${violations.join('\n')}\nthe ledger:\n${ledger}\n`,
  ).toEqual([]);

  const { freeze, thaw } = freezeLines(entries, frozen);
  const token = freeze.token ?? 0;
  const frozenFor = thaw.mono - freeze.mono;
  expect(frozenFor, 'the freeze lasted at least twice the lease').toBeGreaterThanOrEqual(
    2 * leaseMs - 50,
  );
  const takeover = entries.find(
    (e) =>
      e.kind === 'start' &&
      outcome.others.includes(e.instance) &&
      (e.token ?? 0) > token &&
      (outcome.takeover === 'during'
        ? e.mono > freeze.mono && e.mono < thaw.mono
        : e.mono > thaw.mono),
  );
  expect(
    takeover,
    `another instance started the job ${outcome.takeover} the freeze with a token above ${token}; the ledger:\n${ledger}`,
  ).toBeDefined();

  const frozenStarts = entries.filter(
    (e) => e.kind === 'start' && e.instance === frozen && e.token === token,
  );
  if (point !== 'job') {
    expect(
      frozenStarts,
      `${frozen}, frozen at '${point}' before its job started, never starts it; the ledger:\n${ledger}`,
    ).toEqual([]);
    return;
  }
  expect(frozenStarts, 'the frozen run started before the freeze').toHaveLength(1);
  const aborted = entries.some(
    (e) => e.kind === 'abort' && e.instance === frozen && e.token === token,
  );
  expect(aborted, `the frozen run's signal was aborted; the ledger:\n${ledger}`).toBe(true);
  const recorded = executions.filter((e) => e.instanceId === frozen && e.token === token);
  expect(
    recorded.map((e) => e.status),
    `the run frozen inside its job is recorded lease_lost; the ledger:\n${ledger}`,
  ).toEqual(['lease_lost']);
}
