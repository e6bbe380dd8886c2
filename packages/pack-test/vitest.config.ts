import { baseVitest } from '../../vitest.config.base.js';

// Building, packing and an npm install take a while on two shared cores.
export default baseVitest({ testTimeout: 120_000, hookTimeout: 300_000 });
