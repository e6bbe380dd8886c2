import { baseVitest } from '../../vitest.config.base.js';

// One etcd server per test file (started by the testkit), each fixture on its own key prefix.
export default baseVitest({ maxWorkers: 2 });
