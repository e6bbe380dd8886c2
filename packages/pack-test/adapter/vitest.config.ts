import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // one Redis server for the whole run; the fault scenarios start servers of their own
    globalSetup: ['@fleetcron/testkit/global-setup/redis'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
