import { expect } from 'vitest';
import { hostMonotonicMs } from '../fleet/ledger.js';
import { delay, pollUntil } from '../util.js';
import { realCandidateModule } from './candidate-module.js';
import { readingElectorCapabilities } from './capabilities.js';
import { startCandidateChild } from './child-process.js';
import type { ElectionLedgerEntry } from './election-ledger.js';
import { electedLines, withElection } from './setup.js';
import type { ElectorScenario } from './types.js';

/** The frozen leader's term, its acts before the freeze, its abort after the thaw. */
function assertFrozenLeader(entries: ElectionLedgerEntry[], frozen: string): void {
  const freeze = entries.find((e) => e.kind === 'freeze' && e.instance === frozen)!;
  const thaw = entries.find((e) => e.kind === 'thaw' && e.instance === frozen)!;
  const term = [...entries]
    .reverse()
    .find((e) => e.kind === 'elected' && e.instance === frozen && e.mono < freeze.mono)?.term;
  expect(term, `${frozen} led before it froze`).toBeDefined();
  expect(thaw.mono - freeze.mono, 'frozen for about twice the TTL').toBeGreaterThan(0);
  const next = entries.find(
    (e) => e.kind === 'elected' && e.mono > freeze.mono && (e.term ?? 0) > (term ?? 0),
  );
  expect(next, `a term above ${term} was elected after the freeze`).toBeDefined();
  const actsAfterThaw = entries.filter(
    (e) => e.kind === 'act' && e.instance === frozen && e.term === term && e.mono > thaw.mono,
  );
  expect(actsAfterThaw, `${frozen} never acts under term ${term} after the thaw`).toEqual([]);
  const abort = entries.find((e) => e.kind === 'abort' && e.instance === frozen && e.term === term);
  expect(abort, `${frozen}'s signal of term ${term} aborted`).toBeDefined();
}

/** 8. A real process freeze: the leader's process is SIGSTOPped for twice the TTL. */
export const leaderProcessStopped: ElectorScenario = {
  title:
    'the leader process is SIGSTOPped past its TTL: another is elected meanwhile; on SIGCONT the old signal aborts and it never acts under its old term',
  timeoutMs: 60_000,
  run: (options) =>
    withElection(options, { abortBeforeNext: false, oneLeader: true }, async (election) => {
      const { ledger, ttlMs, scale } = election;
      const child = await startCandidateChild(
        {
          id: 'frozen',
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
          () => ledger.read().some((e) => e.kind === 'act' && e.instance === 'frozen'),
          {
            timeoutMs: 20_000 * scale,
            message: 'the child to lead and act',
          },
        );
        const taker = await election.participant('taker');
        taker.start();
        await delay(ttlMs / 2);
        child.freeze();
        ledger.write({ kind: 'freeze', instance: 'frozen' });
        const frozenAt = hostMonotonicMs();
        await pollUntil(() => taker.candidate.isLeader, {
          timeoutMs: (ttlMs * 3 + 10_000) * scale,
          message: 'the taker to lead while the child is frozen',
        });
        await pollUntil(() => hostMonotonicMs() - frozenAt >= 2 * ttlMs, {
          timeoutMs: 2 * ttlMs + 5_000,
          message: 'twice the TTL to pass',
        });
        ledger.write({ kind: 'thaw', instance: 'frozen' });
        child.thaw();
        await pollUntil(
          () => ledger.read().some((e) => e.kind === 'abort' && e.instance === 'frozen'),
          {
            timeoutMs: 5_000 * scale,
            message: "the thawed child's signal to abort",
          },
        ).catch(() => {}); // judged below from the ledger
        await delay(1_000); // let it run on: it must not act under its old term
        const code = await child.stop(15_000 * scale);
        expect(code, `the thawed child exits cleanly:\n${child.output()}`).toBe(0);
      } finally {
        await child.kill();
      }
      assertFrozenLeader(ledger.read(), 'frozen');
    }),
};

/** 9. An in-process freeze: the event loop of the leader's process is blocked for twice the TTL. */
export const leaderLoopBlocked: ElectorScenario = {
  title:
    "the leader's event loop is blocked (Atomics.wait) past its TTL: on waking its signal aborts and it never acts under its old term; the next term is higher",
  timeoutMs: 60_000,
  run: (options) =>
    withElection(options, { abortBeforeNext: false, oneLeader: true }, async (election) => {
      const { ledger, ttlMs, scale } = election;
      const leader = await election.participant('blocked');
      leader.start();
      await pollUntil(
        () => ledger.read().some((e) => e.kind === 'act' && e.instance === 'blocked'),
        {
          timeoutMs: 20_000 * scale,
          message: 'the first candidate to lead and act',
        },
      );
      const taker = await election.participant('taker');
      taker.start();
      await pollUntil(() => taker.events.some((e) => e.type === 'leader'), {
        timeoutMs: 10_000 * scale,
        message: 'the taker to see the leader',
      });
      ledger.write({ kind: 'freeze', instance: 'blocked' });
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 2 * ttlMs);
      ledger.write({ kind: 'thaw', instance: 'blocked' });
      const thaw = ledger.read().find((e) => e.kind === 'thaw')!;
      await pollUntil(() => electedLines(ledger).some((e) => e.mono > thaw.mono), {
        timeoutMs: (ttlMs * 3 + 10_000) * scale,
        message: 'a new term after the block (either candidate)',
      });
      await delay(1_000);
      assertFrozenLeader(ledger.read(), 'blocked');
    }),
};

/** The freeze scenarios, in registration order. */
export const electorFreezeScenarios = readingElectorCapabilities({
  leaderProcessStopped,
  leaderLoopBlocked,
} as const satisfies Record<string, ElectorScenario>);
