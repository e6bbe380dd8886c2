import { baseVitest } from '../../vitest.config.base.js';

// Unit tests only: the adapters' suites run these helpers against real etcd servers.
export default baseVitest();
