import { serialVitest } from '../../vitest.config.base.js';

// test/serial/: the many-jobs restart and the failover scenarios, alone on the machine (`pnpm test:serial`).
export default serialVitest();
