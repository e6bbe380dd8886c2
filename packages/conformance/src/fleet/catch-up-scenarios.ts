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
/**
 * Fires of the job's schedule (the first one after the first instance is up runs before the
 * fleet goes down). 9, not 7: in CI at f00ac78 the first instance came up 3 s into the schedule
 * on SQLite, its first fire was the 4th, and only 3 were left to miss.
 */
const FIRES = 9;
/** The whole fleet stays down across at least this many fires. */
const MISSED_AT_LEAST = 4;
/**
 * The restarted fleet starts this long after the schedule's last fire, ms: more than the
 * scheduler's catch-up grace (max(1 s, earlyToleranceMs + 500 ms); a fire due within it before
 * `start()` is left to a live instance of a rolling restart, so it is not caught up).
 */
const GO_AFTER_LAST_MS = 2_000;
/**
 * How long the restarted fleet runs at least before it is judged, ms: the scheduler catches up
 * at once at `start()`; the rest is margin for the catch-up claims and runs under load.
 */
const RUN_AFTER_START_MS = 8000;
/** How long the restarted fleet may take to reach the expected outcome, ms. */
const GIVE_UP_AFTER_START_MS = 20_000;
/** The reason of the `skipped` row of a fire missed while the fleet was down (`'skip'`). */
export const MISSED_REASON = 'missed';

/**
 * Each run of the exclusive `{ max: 3 }` case works this long, ms: longer than the job's period,
 * so the catch-up runs would meet each other's lease if each missed fire were claimed on its own.
 */
const EXCLUSIVE_WORK_MS = 1500;

/** The catch-up policies the scenarios check (`max3Skip`: `{ max: 3 }` with `overlap: 'skip'`). */
type CatchUpCase = 'latest' | 'max3' | 'max3Skip' | 'skip';

const POLICIES: Record<CatchUpCase, CatchUpSpec> = {
  latest: 'latest',
  max3: { max: 3 },
  max3Skip: { max: 3 },
  skip: 'skip',
};

const TITLES: Record<CatchUpCase, string> = {
  latest:
    "catchUp 'latest': the whole fleet down across fires, 3 processes back together → the newest missed fire runs once fleet-wide",
  max3: 'catchUp { max: 3 }: the whole fleet down across ≥ 4 fires, 3 processes back together → the 3 newest missed fires run once each',
  max3Skip: `catchUp { max: 3 }, overlap 'skip', runs of ${EXCLUSIVE_WORK_MS} ms on a 1 s schedule: the whole fleet down across ≥ 4 fires, 3 processes back together → the 3 newest missed fires run once each, one at a time`,
  skip: `catchUp 'skip': the whole fleet down across fires, 3 processes back together → none runs; each is recorded skipped (${MISSED_REASON}) once`,
};

/** What the down-and-up run left for judging. */
interface DownUp {
  entries: LedgerEntry[];
  /** Fires missed by the whole fleet: after the newest claimed one, before the restart. */
  missed: number[];
}

/** The job's fires: every second, {@link FIRES} of them, the first at least 1.5 s ahead. */
function schedule(): number[] {
  const first = Math.ceil((Date.now() + 1500) / EVERY_MS) * EVERY_MS;
  return Array.from({ length: FIRES }, (_, i) => first + i * EVERY_MS);
}

/**
 * Runs the job on one instance until a fire ran (so the lock has a mark) and stops it; the
 * whole fleet stays down across the remaining fires of the job's schedule; then three child
 * processes start together. Waits until `done()` (the scenario's expected outcome) holds and the
 * fleet has run {@link RUN_AFTER_START_MS}, or up to {@link GIVE_UP_AFTER_START_MS}.
 */
async function downAndUp(
  setup: ControlSetup,
  job: ChildJob & { fires: number[] },
  done: (missed: number[]) => Promise<boolean>,
): Promise<DownUp> {
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
    const go = Math.max(Date.now(), job.fires.at(-1)! + GO_AFTER_LAST_MS);
    await waitUntilTime(go, 'the moment to start the fleet again');
    await Promise.all(children.map((c) => c.go(10_000 * scale)));
    const started = ledger.read().filter((e) => e.kind === 'started' && ids.includes(e.instance));
    const first = Math.min(...started.map((e) => e.wall));
    const missed = job.fires.filter((t) => t > lastClaimed && t < first);
    const settled = first + RUN_AFTER_START_MS * scale;
    const givenUp = first + GIVE_UP_AFTER_START_MS * scale;
    await pollUntil(
      async () => Date.now() >= settled && ((await done(missed)) || Date.now() >= givenUp),
      { timeoutMs: givenUp - Date.now() + 10_000, message: 'the restarted fleet to catch up' },
    );
    const failures = await stopChildren(children, scale);
    expect(failures, 'every restarted process stops cleanly').toEqual([]);
    return { entries: ledger.read(), missed };
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
        const job = {
          name: `catch-up-${kind}`,
          everyMs: EVERY_MS,
          fires: schedule(),
          catchUp: POLICIES[kind],
          // three catch-up runs at once must not meet the overlap rule (one lease per fire)
          ...(kind === 'max3' ? { overlap: 'allow' as const } : {}),
          // an exclusive job whose runs outlast its period: one at a time, each once
          ...(kind === 'max3Skip'
            ? { overlap: 'skip' as const, workMs: EXCLUSIVE_WORK_MS * setup.scale }
            : {}),
        };
        const expectedOf = (missed: number[]) =>
          kind === 'latest' ? missed.slice(-1) : kind === 'skip' ? [] : missed.slice(-3);
        const { entries, missed } = await downAndUp(setup, job, async (missed) => {
          if (kind === 'skip') {
            const rows = await allExecutions(setup.store, job.name);
            return missed.every((t) => rows.some((r) => r.fireAt === t));
          }
          const starts = startsByFire(setup.ledger.read(), job.name);
          return expectedOf(missed).every((t) => starts.has(t));
        });
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
        const expected = expectedOf(missed);
        expect(
          ran.map(at),
          `missed fires that ran (missed: ${missed.map(at).join(', ')}); history:\n${rows}`,
        ).toEqual(expected.map(at));
        for (const t of expected) {
          const outcome = executions.filter((e) => e.fireAt === t).map((e) => e.status);
          expect(outcome, `history of the caught-up fire ${at(t)}`).toEqual(['succeeded']);
        }
        if (kind === 'max3Skip') {
          expect(
            overlappingRuns(entries, job.name),
            'runs of the exclusive job that overlapped',
          ).toEqual([]);
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

/** Pairs of runs of `job` (by the ledger's start and end entries) that overlapped in time. */
function overlappingRuns(entries: readonly LedgerEntry[], job: string): string[] {
  const runs = new Map<string, { fireAt: number; start: number; end: number }>();
  for (const e of entries) {
    if (e.job !== job || (e.kind !== 'start' && e.kind !== 'end')) continue;
    const id = `${e.instance}/${e.fireAt}/${e.token}`;
    const run = runs.get(id) ?? { fireAt: e.fireAt ?? 0, start: e.wall, end: Infinity };
    if (e.kind === 'end') run.end = e.wall;
    runs.set(id, run);
  }
  const sorted = [...runs.values()].sort((x, y) => x.start - y.start);
  return sorted.slice(1).flatMap((run, i) => {
    const before = sorted[i]!;
    return run.start < before.end ? [`${at(before.fireAt)} and ${at(run.fireAt)}`] : [];
  });
}

/** The catch-up scenarios, in registration order. */
export const catchUpScenarios = {
  catchUpLatest: catchUpScenario('latest'),
  catchUpMaxThree: catchUpScenario('max3'),
  catchUpMaxThreeExclusive: catchUpScenario('max3Skip'),
  catchUpSkipRecordsMissed: catchUpScenario('skip'),
} as const satisfies Record<string, FleetScenario>;
