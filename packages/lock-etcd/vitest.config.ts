import { baseVitest } from '../../vitest.config.base.js';

// Two files: the conformance suites (lock, then fleet, in order) and the focused tests. They
// mostly wait on etcd and on real time, so they run side by side even on a 2-core machine.
export default baseVitest({ maxWorkers: 2 });
