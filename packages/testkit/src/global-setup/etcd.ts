import { createGlobalSetup } from '../provide-servers.js';

/**
 * vitest global setup that starts one shared etcd server per test run:
 * `globalSetup: ['@fleetcron/testkit/global-setup/etcd']`.
 */
export default createGlobalSetup(['etcd']);
