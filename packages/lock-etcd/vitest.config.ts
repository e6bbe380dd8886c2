import { baseVitest } from '../../vitest.config.base.js';
import { longFilesFirst } from '../testkit/src/vitest/long-files-first.js';

// The fleet suite (two parts of about 2 minutes), the lock suite and the focused tests are files
// of their own, each on its own etcd servers. They mostly wait on etcd and on real time, so two
// run side by side even on a 2-core machine: the fleet parts first, the others beside them.
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
