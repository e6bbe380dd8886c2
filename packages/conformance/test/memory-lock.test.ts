import { MemoryLock } from '@fleetcron/core';
import { runLockConformance } from '../src/run-lock.js';
import { memoryLockFixture } from './memory-fixture.js';

runLockConformance({
  name: 'memory',
  create: memoryLockFixture(),
  capabilities: new MemoryLock().capabilities,
  inProcess: true,
});
