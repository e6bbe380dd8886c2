import { defineConfig } from 'tsup';
import { baseTsup } from '../../tsup.config.base.js';

// Two entries, `@fleetcron/core` and `@fleetcron/core/backend`. Splitting puts the code they
// share in one chunk per format, so both entries see the same classes (an InvalidOptionError
// thrown by a backend helper is `instanceof` the one the application imports).
export default defineConfig({
  ...baseTsup,
  entry: ['src/index.ts', 'src/backend.ts'],
  splitting: true,
});
