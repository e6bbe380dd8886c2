// Declared durable on an appendonly + fsync-always server (the whole suite runs in
// lock.conformance.test.ts): the claim core, the catch-up mark and every fault scenario.
import { lockFaultScenarios, runLockConformance } from '@fleetcron/conformance';
import { startRedis } from '@fleetcron/testkit';
import { fileServer } from '@fleetcron/testkit/vitest';
import { lockFixtures } from './fixture.js';

const server = fileServer(() => startRedis({ strategy: 'managed', appendOnly: true }));
const create = lockFixtures(async () => (await server()).url, { durable: true });
const claims = ['freshIsolatedFixtures', 'oneWinnerPerFire', 'replaySameLease', 'tokensIncrease'];
const only = [...claims, 'catchUpJudgedByMark', ...Object.keys(lockFaultScenarios)];
const faults = async () => ({ create, server: await server() });
runLockConformance({ name: 'redis (appendonly, durable: true)', create, faults, only });
