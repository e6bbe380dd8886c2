export * from './fleet/scenarios.js';
export * from './lock/faults.js';
export * from './lock/scenarios.js';
export * from './run-fleet.js';
export * from './run-lock.js';
export * from './run-store.js';
export * from './store/scenarios.js';
export * from './types.js';
