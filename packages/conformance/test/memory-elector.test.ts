// Wires the reference elector into the shared conformance suite; each registered scenario holds
// its own assertions (packages/conformance/src/elector), so this file has no expect() of its own.
import { runElectorConformance } from '../src/index.js';
import { memoryElectorFixture } from './elector/memory-elector-fixture.js';

runElectorConformance({
  name: 'memory',
  create: memoryElectorFixture(),
  inProcess: true,
});
