import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // one Redis server for the run, from the published testkit; fault scenarios start their own
    globalSetup: ['@fleetcron/testkit/global-setup/redis'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    reporters: ['default', ['json', { outputFile: 'report.json' }]],
  },
});
