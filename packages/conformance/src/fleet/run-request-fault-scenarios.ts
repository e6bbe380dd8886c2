import { expect } from 'vitest';
import type { FleetScenario } from '../types.js';
import { pollUntil } from '../util.js';
import type { AfterTakeFault, ChildJob } from './child-config.js';
import { type InstanceChild, startInstanceChild } from './child-process.js';
import {
  CONTROL_HEARTBEAT_MS,
  type ControlSetup,
  stopChildren,
  withControlSetup,
} from './control-harness.js';
import type { LedgerEntry } from './ledger.js';

/** The job only runs on request: its trigger fires once a day (never inside the scenario). */
const DAILY_MS = 86_400_000;
/** The instances' `runRequestLeaseMs` (times `timeScale`). */
const TAKE_LEASE_MS = 3_000;
/** The instances' `runRequestPollMs` (times `timeScale`): with push, polls are 10× apart. */
const POLL_MS = 300;
/** Host-clock slack when comparing a run's start with the end of a take's lease, ms. */
const LEASE_SLACK_MS = 250;

/** How the request must be handed on after the fault, judged from the ledger. */
interface Expectation {
  /** The fault of the first taker. */
  fault: AfterTakeFault;
  /** The first taker is SIGKILLed once it took the request. */
  kill: boolean;
  /** The run starts only after the first take's lease (`true`) or well before it (`false`). */
  afterLease: boolean;
}

/**
 * A fleet of 3 instance processes, a run request with data, and a fault of the instance that
 * took it, right after the take: the request runs exactly once fleet-wide, with its data, and the
 * store shows it decided as that run's fire.
 */
function takerFault({ fault, kill, afterLease }: Expectation): FleetScenario['run'] {
  return (options) =>
    withControlSetup(options, async (setup) => {
      const { ledger, store, tag, scale } = setup;
      const job: ChildJob = { name: 'on-request', everyMs: DAILY_MS };
      const taker = `taker-${tag}`;
      const others = [1, 2].map((n) => `fleet${n}-${tag}`);
      const by = `requester-${tag}`;
      const data = { tag, fault, items: [1, 2, 3], note: 'ünï ✓' };
      const children: InstanceChild[] = [];
      let requestId = '';
      let taken: LedgerEntry | undefined;
      try {
        // the others are built but started only after the take (a child process takes seconds
        // to build), so the first taker is the one that takes the request
        const built = await Promise.all([
          instanceChild(setup, taker, job, fault, false),
          ...others.map((id) => instanceChild(setup, id, job, null, true)),
        ]);
        children.push(...built);
        await inRegistry(setup, [taker]);
        requestId = (await store.requestRun({ job: job.name, requestedBy: by, data })).id;
        taken = await pollUntil(
          () => ledger.read().find((e) => e.kind === 'take' && e.instance === taker),
          { timeoutMs: 10_000 * scale, message: `${taker} to take the request` },
        );
        expect(taken.requestIds, 'the first taker took the request').toEqual([requestId]);
        if (kill) await children[0]!.kill();
        await Promise.all(children.slice(1).map((c) => c.go(10_000 * scale)));
        await pollUntil(() => starts(ledger.read(), requestId).length > 0, {
          timeoutMs: (TAKE_LEASE_MS + 10 * POLL_MS + 10_000) * scale,
          message: 'the requested run to start',
        });
        // two more seconds: a second run of the request (decided twice) would start meanwhile
        const until = Date.now() + 2000 * scale;
        await pollUntil(() => Date.now() > until, {
          timeoutMs: 2000 * scale + 5000,
          message: 'two more seconds of the fleet running',
        });
        const alive = kill || fault === 'stop' ? children.slice(1) : children;
        const failures = await stopChildren(alive, scale);
        expect(failures, 'every live instance process stops cleanly').toEqual([]);
      } finally {
        await Promise.all(children.map((c) => c.kill()));
      }

      const runs = starts(ledger.read(), requestId);
      expect(
        runs.map((e) => e.instance),
        'the request ran exactly once fleet-wide',
      ).toHaveLength(1);
      const run = runs[0]!;
      expect(run.request?.data, 'with its data').toEqual(data);
      expect(run.requestedBy).toBe(by);
      if (kill || fault === 'stop') expect(others, 'on a live instance').toContain(run.instance);
      const waited = run.mono - taken!.mono;
      const lease = TAKE_LEASE_MS * scale;
      if (afterLease) {
        expect(
          waited,
          'ms from the take to the run: not before the take’s lease ended',
        ).toBeGreaterThanOrEqual(lease - LEASE_SLACK_MS);
      } else {
        expect(
          waited,
          'ms from the take to the run: given back, not left to the lease',
        ).toBeLessThan(lease - LEASE_SLACK_MS);
      }
      const state = await store.getRunRequest(requestId);
      expect(state, 'the store shows it decided as that run').toMatchObject({
        state: 'decided',
        fireAt: run.fireAt,
        decidedBy: run.instance,
      });
    });
}

/** The start lines of the runs of request `id`. */
function starts(entries: LedgerEntry[], id: string): LedgerEntry[] {
  return entries.filter((e) => e.kind === 'start' && e.request?.id === id);
}

function instanceChild(
  setup: ControlSetup,
  instanceId: string,
  job: ChildJob,
  afterTake: AfterTakeFault | null,
  startOnGo: boolean,
): Promise<InstanceChild> {
  return setup.fixture.newLock().then((lock) =>
    startInstanceChild(
      {
        instanceId,
        leaseMs: setup.leaseMs,
        jobs: [job],
        point: null,
        startOnGo,
        heartbeatMs: CONTROL_HEARTBEAT_MS,
        runRequestLeaseMs: TAKE_LEASE_MS * setup.scale,
        runRequestPollMs: POLL_MS * setup.scale,
        ...(afterTake ? { afterTake } : {}),
        ledgerPath: setup.ledger.path,
        instanceModule: setup.module,
      },
      lock,
      setup.store,
      60_000 * setup.scale,
    ),
  );
}

async function inRegistry(setup: ControlSetup, ids: string[]): Promise<void> {
  await pollUntil(
    async () => {
      const live = await setup.store.instances();
      return ids.every((id) => live.some((i) => i.instanceId === id));
    },
    { timeoutMs: 15_000 * setup.scale, message: `${ids.join(', ')} in the registry` },
  );
}

/** The taker is SIGKILLed right after its take: another instance runs the request once, after the take's lease. */
export const runRequestTakerKilled: FleetScenario = {
  title:
    'run request exactly once: its taker SIGKILLed right after the take, another instance runs it after the take lease',
  timeoutMs: 120_000,
  run: takerFault({ fault: 'hang', kill: true, afterLease: true }),
};

/** The take's reply is lost: the request runs once, after the take's lease. */
export const runRequestTakeReplyLost: FleetScenario = {
  title:
    'run request exactly once: the take’s reply lost, the request runs once after the take lease',
  timeoutMs: 120_000,
  run: takerFault({ fault: 'loseReply', kill: false, afterLease: true }),
};

/** The taker stops right after its take: it gives the request back, another instance runs it at once. */
export const runRequestTakerStopped: FleetScenario = {
  title:
    'run request exactly once: its taker stopping right after the take gives it back, another instance runs it at once',
  timeoutMs: 120_000,
  run: takerFault({ fault: 'stop', kill: false, afterLease: false }),
};

/**
 * Run requests exactly once under faults of their taker (issue #29): registered by the
 * conformance package's own test on the memory lock, not by `runFleetConformance` for every lock.
 * In the fleet-control scenarios the store is the test process's `MemoryStore` whatever the lock,
 * so another lock adds minutes of CI and nothing new; each store package tests its own take,
 * decision and release against its real server with real faults.
 */
export const runRequestFaultScenarios = {
  runRequestTakerKilled,
  runRequestTakeReplyLost,
  runRequestTakerStopped,
} as const satisfies Record<string, FleetScenario>;
