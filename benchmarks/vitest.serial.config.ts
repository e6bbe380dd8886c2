import { serialVitest } from '../vitest.config.base.js';

// test/serial/: the restart harness's own test (a fleet of processes killed and restarted),
// alone on the machine (`pnpm test:serial`).
export default serialVitest();
