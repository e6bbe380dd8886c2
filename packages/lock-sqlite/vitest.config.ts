import { lockSuiteVitest } from '../../vitest.config.base.js';

// No server: each fixture is a SQLite file of its own.
export default lockSuiteVitest();
