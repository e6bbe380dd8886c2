import { lockSuiteVitest } from '../../vitest.config.base.js';

// One shared Redis server per run for the functional tests (each fixture on its own key prefix);
// fault tests start dedicated servers.
export default lockSuiteVitest({ globalSetup: ['@fleetcron/testkit/global-setup/redis'] }, [
  'lock.fleet-part2.test.ts',
  'lock.fleet-part1.test.ts',
]);
