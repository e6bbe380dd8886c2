import { baseVitest } from '../../vitest.config.base.js';
import { longFilesFirst } from '../testkit/src/vitest/long-files-first.js';

// No server: each fixture is a file of its own. The files mostly wait on real time, so two run
// side by side even on a 2-core machine: the fleet suite (two parts of about 2 minutes) first, the
// others beside them.
export default baseVitest({
  maxWorkers: 2,
  sequence: {
    sequencer: longFilesFirst(
      'fleet-part2.conformance.test.ts',
      'fleet-part1.conformance.test.ts',
      'conformance.test.ts',
    ),
  },
});
