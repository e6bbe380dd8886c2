export * from './elector/index.js';
export * from './failover/failover-judge.js';
export * from './failover/failover-scenario.js';
export * from './failover/run-failover.js';
export * from './fleet/instance.js';
export * from './fleet/judge.js';
export * from './fleet/ledger.js';
export { runRequestFaultScenarios } from './fleet/run-request-fault-scenarios.js';
export * from './fleet/scenarios.js';
export {
  checkLockCapabilities,
  lockScenarioOptions,
  readLockCapabilities,
} from './lock/capabilities.js';
export * from './lock/faults.js';
export * from './lock/scenarios.js';
export * from './run-audit.js';
export * from './run-fleet.js';
export * from './run-lock.js';
export * from './run-restart.js';
export * from './run-schedule-store.js';
export * from './run-store.js';
export * from './store/audit-scenarios.js';
export * from './store/fleet-client-scenario.js';
export * from './store/fleet-scenarios.js';
export * from './store/run-request-scenarios.js';
export * from './store/scenarios.js';
export * from './store/schedule-scenarios.js';
export * from './types.js';
