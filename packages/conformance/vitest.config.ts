import { baseVitest } from '../../vitest.config.base.js';
import { longFilesFirst } from '../testkit/src/vitest/long-files-first.js';

// The files mostly wait on real time (fleets of child processes, leases running out), so two run
// side by side even on a 2-core machine: the memory fleet suite (about 4 minutes) first, the
// longest mutant files (a minute or less each) beside it, then the rest.
const longest = [
  'memory-fleet.test.ts',
  'leader-shard-mutants.test.ts',
  'fleet-control-mutants.test.ts',
  'fleet-mutants.test.ts',
  'reads-capabilities.test.ts',
];
export default baseVitest({ maxWorkers: 2, sequence: { sequencer: longFilesFirst(...longest) } });
