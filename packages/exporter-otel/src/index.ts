export * from './fleetcron-opentelemetry.js';
export { CLAIM_DURATION_BUCKETS, FIRE_LAG_BUCKETS, RUN_DURATION_BUCKETS } from './metrics.js';
export * from './names.js';
