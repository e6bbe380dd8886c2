import { createGlobalSetup } from '../provide-servers.js';

/**
 * vitest global setup that starts one shared postgres server per test run:
 * `globalSetup: ['@fleetcron/testkit/global-setup/postgres']`.
 */
export default createGlobalSetup(['postgres']);
