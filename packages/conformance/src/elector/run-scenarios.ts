import { expect } from 'vitest';
import { hostMonotonicMs } from '../fleet/ledger.js';
import { delay, pollUntil } from '../util.js';
import { realCandidateModule } from './candidate-module.js';
import { readingElectorCapabilities } from './capabilities.js';
import { startCandidateChild } from './child-process.js';
import { electedLines, withElection } from './setup.js';
import type { ElectorScenario } from './types.js';

/** 5. Skewed clocks and leadership churn: one leader at a time, aborted before the next. */
export const skewedChurn: ElectorScenario = {
  title:
    'one leader at a time under clock skew (±30 s) while leadership changes hands: each old signal aborts before the next term is elected',
  timeoutMs: 60_000,
  run: (options) =>
    withElection(options, { abortBeforeNext: true, oneLeader: true }, async (election) => {
      const offsets = [-30_000, -700, 700, 30_000];
      const participants = await Promise.all(
        offsets.map((offset, i) =>
          election.participant(`skew${i}`, { clockOffsetMs: offset, campaignIntervalMs: 100 }),
        ),
      );
      for (const p of participants) p.start();
      const wanted = 6;
      for (let round = 0; electedLines(election.ledger).length < wanted; round++) {
        if (round > 40)
          throw new Error(`only ${electedLines(election.ledger).length} terms in 40 rounds`);
        const leader = await pollUntil(() => participants.find((p) => p.candidate.isLeader), {
          timeoutMs: (election.ttlMs * 3 + 10_000) * election.scale,
          message: 'a leader',
        });
        await delay(200); // it acts a few times
        await leader.candidate.resign();
        await delay(50);
        leader.start(); // back in the race
      }
      const terms = electedLines(election.ledger).map((e) => e.term);
      expect(new Set(terms).size, 'distinct terms').toBe(terms.length);
    }),
};

/** 6. resign() hands over at once: the next leader within a campaign interval, not a TTL. */
export const resignHandsOver: ElectorScenario = {
  title:
    'resign() aborts the signal at once and hands over: a follower is elected within about one campaign interval, long before the TTL',
  timeoutMs: 60_000,
  run: (options) =>
    withElection(options, { abortBeforeNext: true, oneLeader: true }, async (election) => {
      const longTtl = Math.max(election.ttlMs, 15_000);
      const more = { ttlMs: longTtl, campaignIntervalMs: 200 };
      const a = await election.participant('leader', more);
      a.start();
      await pollUntil(() => a.candidate.isLeader, {
        timeoutMs: 10_000 * election.scale,
        message: 'the first candidate to lead',
      });
      const b = await election.participant('follower', more);
      b.start();
      await pollUntil(() => b.events.some((e) => e.type === 'leader'), {
        timeoutMs: 10_000 * election.scale,
        message: 'the follower to see the leader',
      });
      const { signal } = a.candidate.assertLeader();
      const resignedAt = hostMonotonicMs();
      const resigned = a.candidate.resign();
      expect(signal.aborted, 'the signal is aborted synchronously by resign()').toBe(true);
      expect(a.candidate.isLeader).toBe(false);
      await resigned;
      await pollUntil(() => b.candidate.isLeader, {
        timeoutMs: longTtl * election.scale,
        message: 'the follower to lead after the resignation',
      });
      const took = electedLines(election.ledger, 'follower')[0]!.mono - resignedAt;
      expect(took, `handed over in ${Math.round(took)} ms, a TTL is ${longTtl} ms`).toBeLessThan(
        Math.min(longTtl / 2, 3_000 * election.scale),
      );
    }),
};

/** 7. The leader's process is SIGKILLed: a new leader within TTL + one campaign interval. */
export const leaderKilled: ElectorScenario = {
  title:
    'the leader process is SIGKILLed: another candidate leads within TTL + one campaign interval, with a higher term',
  timeoutMs: 60_000,
  run: (options) =>
    withElection(options, { abortBeforeNext: true, oneLeader: true }, async (election) => {
      const { ledger, ttlMs, scale } = election;
      const child = await startCandidateChild(
        {
          id: 'doomed',
          election: election.name,
          ttlMs,
          ledgerPath: ledger.path,
          candidateModule: options.candidate ?? realCandidateModule,
        },
        await election.fixture.newElector(),
        30_000 * scale,
      );
      try {
        await pollUntil(
          () => ledger.read().some((e) => e.kind === 'act' && e.instance === 'doomed'),
          {
            timeoutMs: 20_000 * scale,
            message: 'the child to lead and act',
          },
        );
        const survivor = await election.participant('survivor');
        survivor.start();
        await pollUntil(() => survivor.events.some((e) => e.type === 'leader'), {
          timeoutMs: 10_000 * scale,
          message: 'the survivor to see the child lead',
        });
        await delay(ttlMs / 2); // mid-term, after a renewal or two
        await child.kill();
        ledger.write({ kind: 'killed', instance: 'doomed' });
        const killedAt = hostMonotonicMs();
        const interval = Math.floor(ttlMs / 3);
        const slack = Math.max(500, options.capabilities.ttlGranularityMs) * scale;
        await pollUntil(() => survivor.candidate.isLeader, {
          timeoutMs: (ttlMs + interval) * 3 * scale + 10_000,
          message: 'the survivor to lead',
        });
        const took = electedLines(election.ledger, 'survivor')[0]!.mono - killedAt;
        expect(
          took,
          `a new leader ${Math.round(took)} ms after the kill; TTL ${ttlMs} + interval ${interval} + slack ${slack}`,
        ).toBeLessThanOrEqual(ttlMs + interval + slack);
      } finally {
        await child.kill();
      }
    }),
};

/** The candidate scenarios in real time, in registration order. */
export const electorRunScenarios = readingElectorCapabilities({
  skewedChurn,
  resignHandsOver,
  leaderKilled,
} as const satisfies Record<string, ElectorScenario>);
