// Wires this backend into the shared conformance suite; each registered scenario holds its own
// assertions (packages/conformance/src), so this file has no expect() of its own.
import {
  type LockConformanceOptions,
  type LockFaults,
  lockFaultScenarios,
  lockScenarios,
} from '@fleetcron/conformance';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { dedicatedServer, lockFixture } from './fixture.js';

// The lock declared durable on a server with appendonly yes + appendfsync always. The full suite
// runs in lock.conformance.test.ts; here the scenarios where durability matters (declared
// capabilities, the restart, the dropped connection) plus the claim-semantics core, since every
// write waits for an fsync and the 10,000-fire storage scenario would take ~20 s for nothing new.
const durable = dedicatedServer({ appendOnly: true });
afterAll(() => durable.close());

const options: LockConformanceOptions = {
  name: 'redis (appendonly, durable: true)',
  capabilities: {
    ...{ minLeaseMs: 1, leaseGranularityMs: 1, durable: true, clock: 'backend' },
    earlyToleranceMs: 250,
    durableMark: true,
  },
  create: async () => lockFixture((await durable.get()).url, { durable: true }),
};

describe(`${options.name} lock conformance (durability subset)`, () => {
  let faults: LockFaults;
  beforeAll(async () => {
    const server = await durable.get();
    faults = { create: () => lockFixture(server.url, { durable: true }), server };
  });
  const subset = [
    lockScenarios.freshIsolatedFixtures,
    lockScenarios.oneWinnerPerFire,
    lockScenarios.replaySameLease,
    lockScenarios.tokensIncrease,
    lockScenarios.catchUpJudgedByMark,
  ];
  for (const scenario of subset) {
    it(scenario.title, () => scenario.run(options), scenario.timeoutMs);
  }
  for (const scenario of Object.values(lockFaultScenarios)) {
    it(scenario.title, () => scenario.run(options, faults), scenario.timeoutMs);
  }
});
