import { baseVitest } from '../../vitest.config.base.js';

// One shared Redis server per run for the functional tests (each fixture on its own key prefix);
// fault tests start dedicated servers.
export default baseVitest({ globalSetup: ['@fleetcron/testkit/global-setup/redis'] });
