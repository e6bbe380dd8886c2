// RedisLock with replicaAck on a primary with one replica (#31): every scenario that needs no
// server fault, each won claim and renewal acknowledged by the replica (WAIT) before it counts.
// The fault scenarios run on a single server in lock.conformance.test.ts; the frozen replica in
// replica-ack.test.ts.
import { lockScenarios, runLockConformance } from '@fleetcron/conformance';
import { startRedisSentinel } from '@fleetcron/testkit';
import { fileServer } from '@fleetcron/testkit/vitest';
import { lockFixtures } from './fixture.js';

// one Sentinel (fewer processes): nothing fails over in this file. The start takes about 5 s:
// the primary waits repl-diskless-sync-delay (5 s) before the replica's first sync.
const topology = fileServer(() => startRedisSentinel({ sentinels: 1 }));
const primaryUrl = async (): Promise<string> => {
  const { host, port } = (await topology()).nodes[0];
  return `redis://${host}:${port}`;
};
runLockConformance({
  name: 'redis (primary + replica, replicaAck)',
  create: lockFixtures(primaryUrl, { replicaAck: { replicas: 1, timeoutMs: 1_000 } }),
  only: Object.keys(lockScenarios),
});
