// Wires this backend into the shared conformance suite; each registered scenario holds its own
// assertions (packages/conformance/src), so this file has no expect() of its own.
import { runFleetConformance } from '../src/index.js';
import { memoryLockFixture } from './memory-fixture.js';

runFleetConformance({ name: 'memory', create: memoryLockFixture() });
