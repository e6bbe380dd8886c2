export { electorApiScenarios } from './api-scenarios.js';
export * from './candidate-module.js';
export {
  checkElectorCapabilities,
  electorScenarioOptions,
  readElectorCapabilities,
} from './capabilities.js';
export * from './election-ledger.js';
export { electorFaultScenarios } from './fault-scenarios.js';
export { electorFreezeScenarios } from './freeze-scenarios.js';
export * from './run-elector.js';
export { electorRunScenarios } from './run-scenarios.js';
export { ttlFor } from './setup.js';
export type * from './types.js';
