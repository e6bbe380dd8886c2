import { baseVitest } from '../../vitest.config.base.js';
import { longFilesFirst } from '../testkit/src/vitest/long-files-first.js';

// One shared Redis server per run for the functional tests (each fixture on its own key prefix);
// fault tests start dedicated servers. The files mostly wait on real time, so two run side by
// side even on a 2-core machine: the fleet suite (two parts of about 2 minutes) first, the others
// beside them.
export default baseVitest({
  globalSetup: ['@fleetcron/testkit/global-setup/redis'],
  maxWorkers: 2,
  sequence: { sequencer: longFilesFirst('lock.fleet-part2.test.ts', 'lock.fleet-part1.test.ts') },
});
