import { defineConfig } from 'tsup';
import { baseTsup } from '../../tsup.config.base.js';

// ESM only: the suite runs inside vitest (ESM only) and loads fleet instances by `import.meta.url`.
// The fleet freeze scenarios start `dist/fleet-child.js` in child processes; it loads instances
// such as `dist/fleet-instance.js` (the real Scheduler), which must not import vitest.
export default defineConfig({
  ...baseTsup,
  entry: {
    index: 'src/index.ts',
    'fleet-child': 'src/fleet/child-instance.ts',
    'fleet-instance': 'src/fleet/instance.ts',
    'fleet-requester': 'src/fleet/child-requester.ts',
    'elector-child': 'src/elector/child-candidate.ts',
    'elector-candidate': 'src/elector/candidate-module.ts',
  },
  format: ['esm'],
});
