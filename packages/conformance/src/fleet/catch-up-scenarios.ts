import type { CatchUpSpec } from '@fleetcron/core';
import { expect } from 'vitest';
import type { FleetScenario } from '../types.js';
import { pollUntil, waitUntilTime } from '../util.js';
import type { ChildJob } from './child-config.js';
import type { InstanceChild } from './child-process.js';
import {
  allExecutions,
  at,
  type ControlSetup,
  childInstances,
  formatExecutions,
  localInstance,
  startsByFire,
  stopChildren,
  withControlSetup,
} from './control-harness.js';
import type { LedgerEntry } from './ledger.js';

/** The catch-up jobs fire every second. */
const EVERY_MS = 1000;
/** The whole fleet stays down across at least this many fires. */
const MISSED_AT_LEAST = 4;
/** Where in a second the restarted fleet is started: far from both fire boundaries. */
const GO_PHASE_MS = 400;
/** The reason of the `skipped` row of a fire missed while the fleet was down (`'skip'`). */
export const MISSED_REASON = 'missed';

/** The three catch-up policies the scenarios check. */
type CatchUpCase = 'latest' | 'max3' | 'skip';

const POLICIES: Record<CatchUpCase, CatchUpSpec> = {
  latest: 'latest',
  max3: { max: 3 },
  skip: 'skip',
};

const TITLES: Record<CatchUpCase, string> = {
  latest:
    "catchUp 'latest': the whole fleet down across fires, 3 processes back together → the newest missed fire runs once fleet-wide",
  max3: 'catchUp { max: 3 }: the whole fleet down across ≥ 4 fires, 3 processes back together → the 3 newest missed fires run once each',
  skip: `catchUp 'skip': the whole fleet down across fires, 3 processes back together → none runs; each is recorded skipped (${MISSED_REASON}) once`,
};

/** What the down-and-up run left for judging. */
interface DownUp {
  entries: LedgerEntry[];
  /** Newest fire claimed before the fleet went down (the lock's mark then). */
  lastClaimed: number;
  /** Fires missed by the whole fleet: after `lastClaimed`, before the first restarted start. */
  missed: number[];
}

/**
 * Runs the job on one instance until a fire ran (so the lock has a mark), stops it, keeps the
 * whole fleet down across at least {@link MISSED_AT_LEAST} fires, then starts three child
 * processes together (mid-second) and lets them run until a fire 2 s later started.
 */
async function downAndUp(setup: ControlSetup, job: ChildJob): Promise<DownUp> {
  const { ledger, tag, scale, leaseMs } = setup;
  const ids = [1, 2, 3].map((n) => `up${n}-${tag}`);
  // the restarted fleet's processes are made (not started) while the first instance runs
  const spawning = childInstances(setup, ids, [job], true);
  spawning.catch(() => {}); // awaited below; a failure must not be unhandled meanwhile
  let children: InstanceChild[] = [];
  try {
    const before = await localInstance(setup, `before-${tag}`, [job]);
    before.start();
    try {
      await pollUntil(() => ledger.read().some((e) => e.kind === 'start' && e.job === job.name), {
        timeoutMs: (leaseMs + 15_000) * scale,
        message: `a first fire of ${job.name} to run before the fleet goes down`,
      });
    } finally {
      await before.stop();
    }
    const claimed = ledger
      .read()
      .filter((e) => e.kind === 'claimed' && (e.status === 'won' || e.status === 'busy'));
    const lastClaimed = Math.max(...claimed.map((e) => e.fireAt ?? 0));
    children = await spawning;
    const earliest = Math.max(Date.now(), lastClaimed + MISSED_AT_LEAST * EVERY_MS + GO_PHASE_MS);
    const go = Math.ceil((earliest - GO_PHASE_MS) / EVERY_MS) * EVERY_MS + GO_PHASE_MS;
    await waitUntilTime(go, 'the moment to start the fleet again');
    await Promise.all(children.map((c) => c.go(10_000 * scale)));
    const started = ledger.read().filter((e) => e.kind === 'started' && ids.includes(e.instance));
    const first = Math.min(...started.map((e) => e.wall));
    const last = Math.max(...started.map((e) => e.wall));
    expect(last - first, 'the three processes started within 500 ms').toBeLessThan(500);
    await pollUntil(
      () =>
        ledger
          .read()
          .some((e) => e.kind === 'start' && e.job === job.name && (e.fireAt ?? 0) >= go + 2000),
      {
        timeoutMs: (leaseMs * 2 + 15_000) * scale,
        message: 'the restarted fleet to run a fire 2 s after it started',
      },
    );
    const failures = await stopChildren(children, scale);
    expect(failures, 'every restarted process stops cleanly').toEqual([]);
    const missed: number[] = [];
    for (let t = lastClaimed + EVERY_MS; t < first; t += EVERY_MS) missed.push(t);
    return { entries: ledger.read(), lastClaimed, missed };
  } finally {
    if (children.length === 0) children = await spawning.catch(() => []);
    await Promise.all(children.map((c) => c.kill()));
  }
}

/** One catch-up scenario: the fleet down across fires, back up with `policy`. */
function catchUpScenario(kind: CatchUpCase): FleetScenario {
  return {
    title: TITLES[kind],
    timeoutMs: 120_000,
    run: (options) =>
      withControlSetup(options, async (setup) => {
        if (setup.capabilities.durableMark === undefined) {
          // a lock without a mark cannot catch up (the scheduler accepts only 'skip' and records
          // nothing missed): the declaration is what this backend answers for
          expect(setup.capabilities.durableMark, 'a lock without a catch-up mark').toBeUndefined();
          return;
        }
        const job: ChildJob = {
          name: `catch-up-${kind}`,
          everyMs: EVERY_MS,
          catchUp: POLICIES[kind],
          // three catch-up runs at once must not meet the overlap rule (one lease per fire)
          ...(kind === 'max3' ? { overlap: 'allow' as const } : {}),
        };
        const { entries, missed } = await downAndUp(setup, job);
        const executions = await allExecutions(setup.store, job.name);
        const rows = formatExecutions(executions);
        const starts = startsByFire(entries, job.name);
        const twice = [...starts].filter(([, runs]) => runs.length > 1).map(([t]) => at(t));
        expect(twice, 'fires that ran more than once').toEqual([]);
        const running = executions.filter((e) => e.status === 'running');
        expect(
          running.map((e) => at(e.fireAt)),
          `rows still running:\n${rows}`,
        ).toEqual([]);
        expect(missed.length, 'fires missed by the whole fleet').toBeGreaterThanOrEqual(
          MISSED_AT_LEAST,
        );

        const ran = missed.filter((t) => starts.has(t));
        const expected =
          kind === 'latest' ? missed.slice(-1) : kind === 'max3' ? missed.slice(-3) : [];
        expect(
          ran.map(at),
          `missed fires that ran (missed: ${missed.map(at).join(', ')}); history:\n${rows}`,
        ).toEqual(expected.map(at));
        for (const t of expected) {
          const outcome = executions.filter((e) => e.fireAt === t).map((e) => e.status);
          expect(outcome, `history of the caught-up fire ${at(t)}`).toEqual(['succeeded']);
        }
        if (kind !== 'skip') return;
        for (const t of missed) {
          const recorded = executions
            .filter((e) => e.fireAt === t)
            .map((e) => `${e.status}/${e.reason ?? ''}`);
          expect(
            recorded,
            `the missed fire ${at(t)} is recorded skipped (${MISSED_REASON}) exactly once; history:\n${rows}`,
          ).toEqual([`skipped/${MISSED_REASON}`]);
        }
      }),
  };
}

/** The catch-up scenarios, in registration order. */
export const catchUpScenarios = {
  catchUpLatest: catchUpScenario('latest'),
  catchUpMaxThree: catchUpScenario('max3'),
  catchUpSkipRecordsMissed: catchUpScenario('skip'),
} as const satisfies Record<string, FleetScenario>;
