// `@fleetcron/testkit/vitest`: helpers that register vitest hooks (call them at the top level of
// a test file). The main entry has no vitest import, so benchmarks can use it outside vitest.
export * from './dedicated.js';
export * from './per-file.js';
export * from './shared.js';
