import { expect } from 'vitest';
import type { FleetConformanceOptions, FleetScenario, LockFaults } from '../types.js';
import { pollUntil } from '../util.js';
import type { ChildJob } from './child-config.js';
import type { InstanceChild } from './child-process.js';
import { type ControlSetup, withControlSetup } from './control-harness.js';
import {
  duplicateFires,
  electedLines,
  missedFires,
  type TakeoverWindow,
  termViolations,
} from './leader-judge.js';
import type { LedgerEntry } from './ledger.js';
import {
  leaderModeApplies,
  leaderTtlFor,
  newElectorOf,
  reportNotApplicable,
  startLines,
  startModeChildren,
  stopAll,
  waitForStarts,
} from './mode-fleet.js';

/**
 * The job of the leader-mode scenarios: every second, 50 ms of work. Overlap `'allow'`: a late
 * first claim of a new leader (a lock's first call may wait, e.g. for EtcdLock's first clock
 * measurement) must not make the next fire `busy`; each fire's claim still decides it.
 */
const LEADER_JOB: ChildJob = { name: 'leader-job', everyMs: 1000, workMs: 50, overlap: 'allow' };

/** Fires the fleet must run between two faults (and after the last). */
const FIRES_BETWEEN_FAULTS = 3;

/** Margin on top of TTL + one campaign interval for backend and IPC latency under load, ms. */
const TAKEOVER_SLACK_MS = 1_500;

/**
 * How long after the first election a fire is owed by the new leader: one due sooner may have
 * been decided (not leading: not claimed) before the election was announced. Seen in CI: a fire
 * due 10 ms after the first `leader` line of the ledger, not claimed.
 */
const ELECTION_RACE_MS = 250;

/** A leader-mode fleet in the making: its children, which were killed, its takeover bound. */
interface LeaderFleet {
  setup: ControlSetup;
  ids: string[];
  children: Map<string, InstanceChild>;
  killed: Set<string>;
  ttlMs: number;
  /** TTL + one campaign interval (a third of the TTL) + slack, ms: the takeover bound. */
  takeoverMs: number;
  windows: TakeoverWindow[];
}

/** Waits for an instance of `among` to be elected after `afterWall`; resolves its line. */
function waitForLeader(
  fleet: LeaderFleet,
  among: string[],
  afterWall: number,
): Promise<LedgerEntry> {
  return pollUntil(
    () =>
      electedLines(fleet.setup.ledger.read()).find(
        (e) => among.includes(e.instance) && e.wall > afterWall,
      ),
    {
      timeoutMs: (fleet.takeoverMs + 10_000) * fleet.setup.scale,
      intervalMs: 50,
      message: `one of ${among.join(', ')} to be elected after ${new Date(afterWall).toISOString()}`,
    },
  );
}

/**
 * Starts three children in leader mode together, runs `faults` (which add takeover windows),
 * stops the fleet and judges the ledger: no fire ran twice, every fire between the first
 * election and the stop ran unless a takeover window covers it, terms strictly increase.
 */
async function runLeaderFleet(
  setup: ControlSetup,
  faults: (fleet: LeaderFleet) => Promise<void>,
  minTerms: number,
): Promise<void> {
  const elector = await newElectorOf(setup)();
  const ttlMs = leaderTtlFor(elector.capabilities);
  const takeoverMs = ttlMs + Math.ceil(ttlMs / 3) + TAKEOVER_SLACK_MS * setup.scale;
  const ids = ['a', 'b', 'c'].map((x) => `leader-${x}-${setup.tag}`);
  const started = await startModeChildren(setup, ids, [LEADER_JOB], {
    leaderTtlMs: ttlMs,
    startOnGo: true,
  });
  const fleet: LeaderFleet = {
    ...{ setup, ids, ttlMs, takeoverMs, windows: [] },
    children: new Map(ids.map((id, i) => [id, started[i]!])),
    killed: new Set(),
  };
  let firstElected = 0;
  let endAt = 0;
  try {
    await Promise.all(started.map((c) => c.go(30_000 * setup.scale)));
    const first = await waitForLeader(fleet, ids, 0);
    firstElected = first.wall;
    await waitForStarts(setup, LEADER_JOB.name, first.wall, FIRES_BETWEEN_FAULTS, 20_000);
    await faults(fleet);
    endAt = Date.now();
  } catch (error) {
    // a fleet that ran a fire twice may never look for a new leader: say so first
    const twice = duplicateFires(startLines(setup.ledger.read(), LEADER_JOB.name));
    expect(twice, `fires that ran more than once (ledger), then: ${String(error)}`).toEqual([]);
    throw error;
  } finally {
    const live = ids.filter((id) => !fleet.killed.has(id)).map((id) => fleet.children.get(id)!);
    const dead = [...fleet.killed].map((id) => fleet.children.get(id)!);
    await stopAll(live, dead, setup.scale);
  }
  const entries = setup.ledger.read();
  const starts = startLines(entries, LEADER_JOB.name);
  expect(duplicateFires(starts), 'fires that ran more than once (ledger)').toEqual([]);
  const missed = missedFires({
    starts,
    // from the first fire ELECTION_RACE_MS after the first election, up to the last one before
    // the stop: a fire due within a few ms of the election races its announcement (the child
    // logs the election on its wall clock, the scheduler fires on the fleet's clock estimate)
    first: firstElected + ELECTION_RACE_MS * setup.scale,
    last: endAt - LEADER_JOB.everyMs,
    everyMs: LEADER_JOB.everyMs,
    windows: fleet.windows,
  });
  expect(missed, 'fires missed outside the takeover windows (TTL + a campaign)').toEqual([]);
  expect(termViolations(entries), 'terms (leader.changed events)').toEqual([]);
  const terms = new Set(electedLines(entries).map((e) => e.term));
  expect(terms.size, 'terms elected (one per leader the faults made)').toBeGreaterThanOrEqual(
    minTerms,
  );
}

/** The ids of `fleet` neither killed nor `except`. */
const othersThan = (fleet: LeaderFleet, except: string) =>
  fleet.ids.filter((id) => id !== except && !fleet.killed.has(id));

/** SIGKILLs the current leader; waits for the next one and its fires. Returns the new leader. */
async function killLeader(fleet: LeaderFleet, leader: string): Promise<string> {
  const at = Date.now();
  fleet.killed.add(leader);
  await fleet.children.get(leader)!.kill();
  fleet.windows.push({ what: `SIGKILL of ${leader}`, from: at, to: at + fleet.takeoverMs });
  const next = await waitForLeader(fleet, othersThan(fleet, leader), at);
  const { name } = LEADER_JOB;
  await waitForStarts(fleet.setup, name, at + fleet.takeoverMs, FIRES_BETWEEN_FAULTS, 30_000);
  return next.instance;
}

/**
 * SIGSTOPs the leader past its TTL (until another leads and the TTL passed), then SIGCONTs it;
 * waits until it reports the term lost and the fleet ran more fires.
 */
async function freezeLeader(fleet: LeaderFleet, leader: string): Promise<void> {
  const { setup, ttlMs, takeoverMs } = fleet;
  const child = fleet.children.get(leader)!;
  const at = Date.now();
  child.freeze();
  try {
    await waitForLeader(fleet, othersThan(fleet, leader), at);
    await pollUntil(() => Date.now() > at + ttlMs + 500, {
      timeoutMs: ttlMs + 5_000,
      message: 'the frozen leader to be past its TTL',
    });
  } finally {
    child.thaw();
  }
  fleet.windows.push({ what: `SIGSTOP of ${leader}`, from: at, to: at + takeoverMs });
  await pollUntil(
    () =>
      setup.ledger
        .read()
        .some((e) => e.kind === 'leader' && e.instance === leader && !e.isLeader && e.wall > at),
    {
      timeoutMs: (ttlMs + 10_000) * setup.scale,
      message: `${leader}, thawed after its TTL, to report its term lost (leader.changed)`,
    },
  );
  const after = Math.max(Date.now(), at + takeoverMs);
  await waitForStarts(setup, LEADER_JOB.name, after, FIRES_BETWEEN_FAULTS, 30_000);
}

/** The leader as of now: the last elected line's instance. */
function currentLeader(fleet: LeaderFleet): string {
  return electedLines(fleet.setup.ledger.read()).at(-1)!.instance;
}

/**
 * Leader mode with real processes: three instances elect a leader on the backend's elector; the
 * leader is SIGKILLed, then the next leader is SIGSTOPped past its TTL and let go. Judged from
 * the ledger: no fire runs twice, no fire is missed outside the takeover windows (TTL + one
 * campaign interval after each fault), terms strictly increase.
 */
export const leaderKilledAndFrozen: FleetScenario = {
  title:
    'leader mode, 3 instances: leader SIGKILLed, next leader SIGSTOPped past its TTL: 0 duplicates, no fire missed outside the takeover windows, terms increase',
  timeoutMs: 120_000,
  async run(options) {
    if (!leaderModeApplies(options)) return;
    await withControlSetup(options, (setup) =>
      runLeaderFleet(
        setup,
        async (fleet) => {
          const second = await killLeader(fleet, currentLeader(fleet));
          await freezeLeader(fleet, second);
        },
        3,
      ),
    );
  },
};

/** Resolves the `faults` option of the fleet suite (`null`: none given). */
async function fleetFaults(options: FleetConformanceOptions): Promise<LockFaults | null> {
  const { faults } = options;
  if (!faults) return null;
  return typeof faults === 'function' ? faults() : faults;
}

/**
 * Leader mode through a server restart (needs `faults`, a dedicated server): three instances in
 * leader mode, the server is restarted under them. No fire runs twice; every fire outside the
 * outage plus a takeover window runs; terms strictly increase.
 */
export const leaderServerRestart: FleetScenario = {
  title:
    'leader mode, 3 instances, server restarted: 0 duplicates, no fire missed outside the outage and takeover window, terms increase',
  timeoutMs: 120_000,
  async run(options) {
    if (!leaderModeApplies(options)) return;
    const faults = await fleetFaults(options);
    if (!faults) {
      reportNotApplicable(
        options,
        'was given no faults: pass faults (a dedicated server, as for runLockConformance) to runFleetConformance to restart the server under a leader',
      );
      return;
    }
    try {
      await withControlSetup({ ...options, create: () => faults.create() }, (setup) =>
        runLeaderFleet(
          setup,
          async (fleet) => {
            const at = Date.now();
            await faults.server.restart();
            const back = Date.now();
            fleet.windows.push({ what: 'server restart', from: at, to: back + fleet.takeoverMs });
            const { name } = LEADER_JOB;
            await waitForStarts(setup, name, back + fleet.takeoverMs, FIRES_BETWEEN_FAULTS, 30_000);
          },
          1,
        ),
      );
    } finally {
      await faults.close?.();
    }
  },
};

/** The leader-mode scenarios, as `runFleetConformance` registers them. */
export const leaderModeScenarios = {
  leaderKilledAndFrozen,
  leaderServerRestart,
} as const satisfies Record<string, FleetScenario>;
