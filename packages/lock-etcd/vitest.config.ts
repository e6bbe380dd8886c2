import { lockSuiteVitest } from '../../vitest.config.base.js';

// The fleet suite (two parts of about 2 minutes), the lock suite and the focused tests are files
// of their own, each on its own etcd servers.
export default lockSuiteVitest();
