/**
 * Fleet control, with a store that has the registry: heartbeats into it, drift checks of job
 * definitions across instances, the holder-lost sweep, run requests from other processes, and
 * pausing a job fleet-wide.
 */
export type { FleetControl } from './fleet-control.js';
export { DEFAULT_HEARTBEAT_MS } from './heartbeat.js';
export { LiveInstances } from './live-instances.js';
export { setJobPaused, unknownJob } from './pause.js';
export { wireFleet } from './wiring.js';
