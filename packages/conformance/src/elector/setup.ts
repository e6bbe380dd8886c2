import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ElectorCapabilities, offsetClock, realClock } from '@fleetcron/core';
import { expect } from 'vitest';
import { spyOnCrashes, using } from '../util.js';
import {
  type CandidateFactory,
  loadCandidateFactory,
  realCandidateModule,
} from './candidate-module.js';
import {
  ElectionLedger,
  electionViolations,
  formatElectionLedger,
  type JudgeOptions,
} from './election-ledger.js';
import { Participant } from './participant.js';
import type { ElectorFixture, ElectorScenarioOptions } from './types.js';

/** A TTL the backend accepts: at least `ms` and `minTtlMs`, rounded up to the granularity. */
export function ttlFor(capabilities: ElectorCapabilities, ms: number): number {
  const granularity = Math.max(1, capabilities.ttlGranularityMs);
  return Math.ceil(Math.max(ms, capabilities.minTtlMs) / granularity) * granularity;
}

/** What every candidate scenario works with. */
export interface Election {
  options: ElectorScenarioOptions;
  fixture: ElectorFixture;
  factory: CandidateFactory;
  ledger: ElectionLedger;
  /** A fresh election name. */
  name: string;
  /** The TTL of the scenario's terms (2 s, or the backend's minimum). */
  ttlMs: number;
  scale: number;
  tag: string;
  /** Starts an in-process participant on its own elector client. */
  participant(
    id: string,
    more?: { campaignIntervalMs?: number; ttlMs?: number; clockOffsetMs?: number },
  ): Promise<Participant>;
}

/**
 * Runs `body` with a fresh fixture (from `make`, default `options.create`), ledger and election;
 * stops every participant, then judges the ledger with `judge` and checks that nothing crashed
 * the process. Every failure message ends with the ledger.
 */
export async function withElection(
  options: ElectorScenarioOptions,
  judge: JudgeOptions,
  body: (election: Election) => Promise<void>,
  make: () => Promise<ElectorFixture> = options.create,
): Promise<void> {
  const tag = randomUUID().slice(0, 8);
  const ledger = new ElectionLedger(join(tmpdir(), `fleetcron-election-${tag}.jsonl`));
  const crashes = spyOnCrashes();
  const participants: Participant[] = [];
  try {
    const factory = await loadCandidateFactory(options.candidate ?? realCandidateModule);
    await using(make, async (fixture) => {
      const capabilities = (await fixture.newElector()).capabilities;
      const election: Election = {
        options,
        fixture,
        factory,
        ledger,
        name: `election-${tag}`,
        ttlMs: ttlFor(capabilities, 2000),
        scale: options.timeScale ?? 1,
        tag,
        async participant(id, more = {}) {
          const clock =
            more.clockOffsetMs === undefined
              ? undefined
              : offsetClock(realClock, more.clockOffsetMs);
          const participant = new Participant({
            id,
            election: election.name,
            ttlMs: more.ttlMs ?? election.ttlMs,
            campaignIntervalMs: more.campaignIntervalMs,
            elector: await fixture.newElector({ clock }),
            clock,
            ledger,
            factory,
          });
          participants.push(participant);
          return participant;
        },
      };
      try {
        await body(election);
      } finally {
        await Promise.all(participants.map((p) => p.stop()));
      }
    });
    const entries = ledger.read();
    const violations = electionViolations(entries, judge);
    expect(violations, `safety rules broken:\n${violations.join('\n')}`).toEqual([]);
    expect(crashes.caught, 'no unhandled rejection or uncaught exception').toEqual([]);
  } catch (error) {
    if (error instanceof Error && !error.message.includes('the ledger:')) {
      error.message += `\nthe ledger:\n${formatElectionLedger(ledger.read())}`;
    }
    throw error;
  } finally {
    crashes.dispose();
    ledger.close();
    rmSync(ledger.path, { force: true });
  }
}

/** The `elected` lines of `instance` (all instances when omitted). */
export function electedLines(ledger: ElectionLedger, instance?: string) {
  return ledger
    .read()
    .filter((e) => e.kind === 'elected' && (instance === undefined || e.instance === instance));
}
