import { baseVitest } from '../../vitest.config.base.js';
import { longFilesFirst } from '../testkit/src/vitest/long-files-first.js';

// One shared PostgreSQL server per test run (vitest resolves globalSetup entries as paths), a
// database per file. The files mostly wait on real time, so two run side by side even on a 2-core
// machine: the fleet suite (two parts of about 2 minutes) first, the others beside it.
export default baseVitest({
  globalSetup: ['../testkit/src/global-setup/postgres.ts'],
  maxWorkers: 2,
  sequence: {
    sequencer: longFilesFirst(
      'fleet-part2.conformance.test.ts',
      'fleet-part1.conformance.test.ts',
      'conformance.test.ts',
    ),
  },
});
