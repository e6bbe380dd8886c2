import { lockSuiteVitest } from '../../vitest.config.base.js';

// One shared PostgreSQL server per test run (vitest resolves globalSetup entries as paths), a
// database per file.
export default lockSuiteVitest({ globalSetup: ['../testkit/src/global-setup/postgres.ts'] });
