import type { ElectorCapabilities } from '@fleetcron/core';
import { TestRunner } from 'vitest';
import type { FleetConformanceOptions } from '../types.js';
import { pollUntil } from '../util.js';
import type { ChildJob } from './child-config.js';
import { type InstanceChild, startInstanceChild } from './child-process.js';
import { CONTROL_HEARTBEAT_MS, type ControlSetup } from './control-harness.js';
import type { LedgerEntry } from './ledger.js';

/**
 * Shared plumbing of the leader-mode and sharded-fire fleet scenarios (issue 16): instances in
 * child processes (SIGKILL and SIGSTOP are real), in leader mode on the backend's elector or with
 * sharded jobs, judged from the append-only ledger.
 */

/** Shortest term the leader-mode scenarios ask for, ms (raised to the elector's minimum). */
export const SCENARIO_LEADER_TTL_MS = 2_000;

/** A term length the elector accepts: at least `ms` and `minTtlMs`, rounded up to granularity. */
export function leaderTtlFor(
  capabilities: ElectorCapabilities,
  ms = SCENARIO_LEADER_TTL_MS,
): number {
  const granularity = Math.max(1, capabilities.ttlGranularityMs);
  return Math.ceil(Math.max(ms, capabilities.minTtlMs) / granularity) * granularity;
}

/**
 * Reports the running scenario as not applicable: vitest marks the test skipped with `note`, so
 * the report shows it (never a silent pass). Outside a running test it only returns.
 */
export function reportNotApplicable(options: FleetConformanceOptions, note: string): void {
  TestRunner.getCurrentTest()?.context.skip(`not applicable: ${options.name} ${note}`);
}

/**
 * Whether the leader-mode scenarios apply: `false` (after reporting the skip) when the adapter
 * declared `electorless`. A fixture without `newElector` is checked by {@link newElectorOf}.
 */
export function leaderModeApplies(options: FleetConformanceOptions): boolean {
  if (options.electorless === undefined) return true;
  reportNotApplicable(options, `has no elector (${options.electorless})`);
  return false;
}

/** The fixture's elector factory; fails with what to add when the fixture has none. */
export function newElectorOf(
  setup: ControlSetup,
): NonNullable<ControlSetup['fixture']['newElector']> {
  const make = setup.fixture.newElector;
  if (typeof make !== 'function') {
    throw new Error(
      `${setup.options.name} fleet conformance: the leader-mode scenarios need the backend's elector, but the fixture has no newElector(). Add newElector() to the LockFixture that create() returns (an elector with its own connection on the fixture's namespace, closed by close()), or pass electorless: '<why>' to runFleetConformance if the backend has no elector at all.`,
    );
  }
  return (options) => make.call(setup.fixture, options);
}

/** How the children of one scenario run. */
export interface ModeChildOptions {
  /** Leader mode with this term length, ms, each child on its own elector client. */
  leaderTtlMs?: number;
  /** The schedulers' `shardGraceMs`. */
  shardGraceMs?: number;
  /** Wait for {@link InstanceChild.go} before starting (several start together). */
  startOnGo?: boolean;
}

/**
 * Starts one child instance per id, in parallel, each on its own lock client (and elector client
 * in leader mode), all on the setup's store, heartbeating every {@link CONTROL_HEARTBEAT_MS}.
 */
export function startModeChildren(
  setup: ControlSetup,
  ids: readonly string[],
  jobs: ChildJob[],
  options: ModeChildOptions = {},
): Promise<InstanceChild[]> {
  const { leaderTtlMs, shardGraceMs, startOnGo = false } = options;
  return Promise.all(
    ids.map(async (instanceId) =>
      startInstanceChild(
        {
          instanceId,
          leaseMs: setup.leaseMs,
          jobs,
          point: null,
          startOnGo,
          heartbeatMs: CONTROL_HEARTBEAT_MS,
          ledgerPath: setup.ledger.path,
          instanceModule: setup.module,
          ...(leaderTtlMs === undefined ? {} : { leaderTtlMs }),
          ...(shardGraceMs === undefined ? {} : { shardGraceMs }),
        },
        await setup.fixture.newLock(),
        setup.store,
        60_000 * setup.scale,
        leaderTtlMs === undefined ? undefined : await newElectorOf(setup)(),
      ),
    ),
  );
}

/** Start lines of `job` (scheduled fires only), in file order. */
export function startLines(entries: readonly LedgerEntry[], job: string): LedgerEntry[] {
  return entries.filter((e) => e.kind === 'start' && e.job === job && !e.requestedBy);
}

/** Waits until `count` runs of `job` with a fire time after `afterWall` (epoch ms) started. */
export function waitForStarts(
  setup: ControlSetup,
  job: string,
  afterWall: number,
  count: number,
  timeoutMs: number,
): Promise<true> {
  return pollUntil(
    () =>
      startLines(setup.ledger.read(), job).filter((e) => (e.fireAt ?? 0) > afterWall).length >=
      count,
    {
      timeoutMs: timeoutMs * setup.scale,
      intervalMs: 50,
      message: `${count} runs of ${job} with fires after ${new Date(afterWall).toISOString()}`,
    },
  );
}

/**
 * Stops the live children (killing the ones that do not exit in time); throws with their output
 * when one does not exit cleanly. The killed ones are only reaped.
 */
export async function stopAll(
  live: readonly InstanceChild[],
  killed: readonly InstanceChild[],
  scale: number,
): Promise<void> {
  const codes = await Promise.all(live.map((c) => c.stop(20_000 * scale)));
  await Promise.all([...live, ...killed].map((c) => c.kill()));
  const failures = codes.flatMap((code, i) =>
    code === 0 ? [] : [`child ${i} exited ${code}:\n${live[i]!.output()}`],
  );
  if (failures.length > 0) throw new Error(`children failed to stop:\n${failures.join('\n')}`);
}
