import { baseVitest } from '../../vitest.config.base.js';

// The shared servers for test/global-setup.test.ts, through the published subpath.
export default baseVitest({ globalSetup: ['@fleetcron/testkit/global-setup'] });
