import { baseVitest } from '../../vitest.config.base.js';

// One shared PostgreSQL and Redis (and etcd) per run; each test uses its own schema / prefix.
// test/global-build.ts builds the package first: the tests run the built `fleetcron` binary.
export default baseVitest({
  globalSetup: ['./test/global-build.ts', '@fleetcron/testkit/global-setup'],
});
