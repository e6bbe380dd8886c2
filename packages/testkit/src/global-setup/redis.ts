import { createGlobalSetup } from '../provide-servers.js';

/**
 * vitest global setup that starts one shared redis server per test run:
 * `globalSetup: ['@fleetcron/testkit/global-setup/redis']`.
 */
export default createGlobalSetup(['redis']);
