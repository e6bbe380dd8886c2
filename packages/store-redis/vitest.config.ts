import { baseVitest } from '../../vitest.config.base.js';

// One shared Redis server per run for the functional tests (each fixture on its own key prefix);
// fault tests start dedicated servers. vitest resolves globalSetup entries as paths.
export default baseVitest({ globalSetup: ['../testkit/src/global-setup/redis.ts'] });
