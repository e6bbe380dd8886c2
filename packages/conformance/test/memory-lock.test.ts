// Wires this backend into the shared conformance suite; each registered scenario holds its own
// assertions (packages/conformance/src), so this file has no expect() of its own.
import { MemoryLock } from '@fleetcron/core';
import { runLockConformance } from '../src/run-lock.js';
import { memoryLockFixture } from './memory-fixture.js';

runLockConformance({
  name: 'memory',
  create: memoryLockFixture(),
  capabilities: new MemoryLock().capabilities,
  inProcess: true,
});
