import { baseVitest } from '../../vitest.config.base.js';

// One shared PostgreSQL server per test run (vitest resolves globalSetup entries as paths).
export default baseVitest({ globalSetup: ['../testkit/src/global-setup/postgres.ts'] });
