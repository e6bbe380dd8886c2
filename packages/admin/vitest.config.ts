import { baseVitest } from '../../vitest.config.base.js';

// One shared server of each kind per run; each test file uses its own key prefix / schema.
export default baseVitest({ globalSetup: ['@fleetcron/testkit/global-setup'] });
