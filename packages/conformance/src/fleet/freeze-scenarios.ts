import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { every, MemoryStore, realClock, type Store } from '@fleetcron/core';
import { expect } from 'vitest';
import type { FleetConformanceOptions, FleetScenario, LockFixture } from '../types.js';
import { leaseFor, pollUntil, spyOnCrashes, using } from '../util.js';
import { startInstanceChild } from './child-process.js';
import { assertFreezeOutcome, freezeLines } from './freeze-checks.js';
import {
  type FleetInstance,
  type FleetInstanceFactory,
  loadInstanceFactory,
  schedulerInstanceModule,
} from './instance.js';
import {
  type FreezePoint,
  FreezeTrap,
  instrumentLock,
  instrumentStore,
  ledgerJob,
} from './instrument.js';
import { formatLedger } from './judge.js';
import { hostMonotonicMs, Ledger } from './ledger.js';

/** The one job of the freeze scenarios. */
const JOB = 'freeze-job';
/** It fires every second. */
const EVERY_MS = 1000;

const POINT_TITLES: Record<FreezePoint, string> = {
  claim: 'inside the claim round trip',
  store: 'between claim and job start (inside the store call)',
  job: 'inside the job',
};

/** What both kinds of freeze scenario set up: a ledger, a store, a lease, ids. */
interface FreezeSetup {
  options: FleetConformanceOptions;
  fixture: LockFixture;
  factory: FleetInstanceFactory;
  ledger: Ledger;
  store: Store;
  leaseMs: number;
  scale: number;
  frozen: string;
  taker: string;
}

/** Runs `body` with a fresh fixture, ledger and store; always cleans up. */
async function withFreezeSetup(
  options: FleetConformanceOptions,
  body: (setup: FreezeSetup) => Promise<void>,
): Promise<void> {
  const instanceModule = options.instance ?? schedulerInstanceModule;
  const factory = await loadInstanceFactory(instanceModule);
  const tag = randomUUID().slice(0, 8);
  const ledger = new Ledger(join(tmpdir(), `fleetcron-ledger-${tag}.jsonl`));
  try {
    await using(options.create, async (fixture) => {
      const capabilities = (await fixture.newLock()).capabilities;
      await body({
        options,
        fixture,
        factory,
        ledger,
        store: new MemoryStore(),
        leaseMs: leaseFor(capabilities, options.leaseMs ?? 2000),
        scale: options.timeScale ?? 1,
        frozen: `frozen-${tag}`,
        taker: `taker-${tag}`,
      });
    });
  } catch (error) {
    // every failure shows what ran: the ledger, unless the message has it already
    if (error instanceof Error && !error.message.includes('the ledger:')) {
      error.message += `\nthe ledger:\n${formatLedger(ledger.read())}`;
    }
    throw error;
  } finally {
    ledger.close();
    rmSync(ledger.path, { force: true });
  }
}

/** An in-process instance on its own client of the fixture, writing the ledger. */
async function ledgerInstance(
  setup: FreezeSetup,
  instanceId: string,
  trap?: FreezeTrap,
): Promise<FleetInstance> {
  const { fixture, ledger, store, leaseMs } = setup;
  const instrumentation = { ledger, instance: instanceId, trap };
  return setup.factory({
    instanceId,
    lock: instrumentLock(await fixture.newLock(), instrumentation),
    store: instrumentStore(store, trap),
    clock: realClock,
    leaseMs,
    jobs: [{ name: JOB, trigger: every(EVERY_MS), run: ledgerJob(instrumentation) }],
  });
}

/** Lets the fleet run on after the thaw until a fire due 2 s after it started somewhere. */
async function runOnAfterThaw(setup: FreezeSetup): Promise<void> {
  const { ledger, frozen, scale } = setup;
  const thaw = await pollUntil(
    () => ledger.read().find((e) => e.kind === 'thaw' && e.instance === frozen),
    { timeoutMs: 15_000 * scale, message: `${frozen} to write its thaw line` },
  );
  await pollUntil(
    () =>
      setup.ledger.read().some((e) => e.kind === 'start' && (e.fireAt ?? 0) >= thaw.wall + 2000),
    {
      timeoutMs: (setup.leaseMs * 3 + 15_000) * setup.scale,
      message: 'a fire 2 s after the thaw to start',
    },
  );
}

/**
 * Waits until one of `by` (default: the taker) started the job after `sinceMono` with a token
 * above the frozen one, and at least `minMs` have passed since `sinceMono` (host monotonic clock).
 */
function takeoverSince(
  setup: FreezeSetup,
  sinceMono: number,
  minMs: number,
  by: readonly string[] = [setup.taker],
) {
  return pollUntil(
    () => {
      const entries = setup.ledger.read();
      const token = entries.find((e) => e.kind === 'freeze')?.token ?? Number.POSITIVE_INFINITY;
      return (
        hostMonotonicMs() - sinceMono >= minMs &&
        entries.some(
          (e) =>
            e.kind === 'start' &&
            by.includes(e.instance) &&
            e.mono > sinceMono &&
            (e.token ?? 0) > token,
        )
      );
    },
    {
      timeoutMs: (setup.leaseMs * 6 + 15_000) * setup.scale,
      message: `${by.join(' or ')} to start the job with a higher token`,
    },
  );
}

/**
 * (a) A real process freeze: the holder runs in a child process and blocks at `point`; the
 * parent SIGSTOPs it there for at least twice the lease, while an instance in the parent takes
 * the job over; then SIGCONTs it and lets it go.
 */
function processFreeze(point: FreezePoint): FleetScenario {
  return {
    title: `a holder process SIGSTOPped ${POINT_TITLES[point]} past its lease: never starts or succeeds late; the takeover has a higher token`,
    timeoutMs: 60_000,
    run: (options) =>
      withFreezeSetup(options, async (setup) => {
        const { fixture, store, leaseMs, scale, ledger } = setup;
        const child = await startInstanceChild(
          {
            instanceId: setup.frozen,
            leaseMs,
            jobs: [{ name: JOB, everyMs: EVERY_MS }],
            point,
            ledgerPath: ledger.path,
            instanceModule: options.instance ?? schedulerInstanceModule,
          },
          await fixture.newLock(),
          store,
          30_000 * scale,
        );
        let taker: FleetInstance | null = null;
        try {
          await child.waitFrozen((leaseMs * 2 + 15_000) * scale);
          child.freeze();
          const frozenAt = hostMonotonicMs();
          taker = await ledgerInstance(setup, setup.taker);
          taker.start();
          await takeoverSince(setup, frozenAt, 2 * leaseMs);
          child.thaw();
          await runOnAfterThaw(setup);
          const code = await child.stop(20_000 * scale);
          expect(code, `the frozen instance's process exits cleanly:\n${child.output()}`).toBe(0);
        } finally {
          await child.kill();
          await taker?.stop();
        }
        await assertFreezeOutcome({
          point,
          entries: ledger.read(),
          store,
          job: JOB,
          leaseMs,
          frozen: setup.frozen,
          others: [setup.taker],
          takeover: 'during',
        });
      }),
  };
}

/**
 * (b) An in-process event-loop block: the holder blocks at `point` with `Atomics.wait` for twice
 * the lease. The block freezes every instance of the process, so the other instance (started
 * just before the block, in the same process) can only take over after it.
 */
function eventLoopBlock(point: FreezePoint): FleetScenario {
  return {
    title: `a holder whose event loop is blocked ${POINT_TITLES[point]} past its lease: never starts or succeeds late; the next claim has a higher token`,
    timeoutMs: 60_000,
    run: (options) =>
      withFreezeSetup(options, async (setup) => {
        const { leaseMs, scale, ledger, store } = setup;
        const crashes = spyOnCrashes();
        const taker = await ledgerInstance(setup, setup.taker);
        const blocked = new Int32Array(new SharedArrayBuffer(4));
        const trap = new FreezeTrap(point, setup.frozen, ledger, () => {
          taker.start();
          Atomics.wait(blocked, 0, 0, 2 * leaseMs);
        });
        const holder = await ledgerInstance(setup, setup.frozen, trap);
        try {
          holder.start();
          await pollUntil(() => trap.hasSprung, {
            timeoutMs: (leaseMs * 2 + 15_000) * scale,
            message: `${setup.frozen} to reach its freeze point (${point})`,
          });
          const thawedAt = freezeLines(ledger.read(), setup.frozen).thaw.mono;
          // both instances woke together in this process: whichever claims first takes the next
          // fire (the thawed holder may win every race); what matters is the higher token
          await takeoverSince(setup, thawedAt, 0, [setup.taker, setup.frozen]);
          await runOnAfterThaw(setup);
        } finally {
          await holder.stop();
          await taker.stop();
          crashes.dispose();
        }
        expect(crashes.caught, 'no unhandled rejection or uncaught exception').toEqual([]);
        await assertFreezeOutcome({
          point,
          entries: ledger.read(),
          store,
          job: JOB,
          leaseMs,
          frozen: setup.frozen,
          others: [setup.taker, setup.frozen],
          takeover: 'after',
        });
      }),
  };
}

/** The freeze scenarios, in registration order. */
export const freezeScenarios = {
  processFrozenInClaim: processFreeze('claim'),
  processFrozenBeforeStart: processFreeze('store'),
  processFrozenInJob: processFreeze('job'),
  loopBlockedInClaim: eventLoopBlock('claim'),
  loopBlockedBeforeStart: eventLoopBlock('store'),
  loopBlockedInJob: eventLoopBlock('job'),
} as const satisfies Record<string, FleetScenario>;
