// A real 3-primary Redis Cluster (no fault controls): the claim-semantics scenarios hold there
// too, every script on one slot. The whole suite runs in lock.conformance.test.ts.
import { runLockConformance } from '@fleetcron/conformance';
import { startRedisCluster } from '@fleetcron/testkit';
import { fileServer } from '@fleetcron/testkit/vitest';
import { clusterLockFixtures } from './fixture.js';

const cluster = fileServer(startRedisCluster);
const only = ['oneWinnerPerFire', 'replaySameLease', 'independentOverlappingLeases', 'oddKeys'];
only.push('tokensIncrease', 'withdrawHandsBack', 'catchUpJudgedByMark', 'readMarksMatchInspect');
only.push('claimManyMatchesSingleClaims', 'claimManyOverlappingBatches', 'claimManyThousandKeys');
runLockConformance({ name: 'redis cluster', create: clusterLockFixtures(cluster), only });
