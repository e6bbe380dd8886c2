// Wires this backend into the shared conformance suite; each registered scenario holds its own
// assertions (packages/conformance/src), so this file has no expect() of its own.
import { MemoryStore } from '@fleetcron/core';
import {
  runAuditConformance,
  runScheduleStoreConformance,
  runStoreConformance,
} from '../src/index.js';
import { memoryStoreFixture } from './memory-fixture.js';

runStoreConformance({ name: 'memory', create: memoryStoreFixture(() => new MemoryStore()) });

runStoreConformance({
  name: 'memory (maxErrorLength 300)',
  create: memoryStoreFixture(() => new MemoryStore({ maxErrorLength: 300 })),
  maxErrorLength: 300,
});

runScheduleStoreConformance({
  name: 'memory',
  create: memoryStoreFixture(() => new MemoryStore()),
  dropPush: { unsupported: 'MemoryStore pushes in process: there is no connection to drop' },
});

runAuditConformance({
  name: 'memory',
  create: memoryStoreFixture(() => new MemoryStore({ audit: { maxEntries: 40 } })),
  maxEntries: 40,
});
