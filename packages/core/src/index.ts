export * from './candidate.js';
export * from './clock.js';
export * from './elector.js';
export * from './errors.js';
export * from './events.js';
export * from './fake-clock.js';
export * from './fleet/index.js';
export * from './fleet-clock/index.js';
export * from './lock.js';
export * from './memory-elector.js';
export * from './memory-lock.js';
export * from './memory-store.js';
// built-in middleware
export * from './middleware/recover.js';
export * from './middleware/retry.js';
export * from './middleware/skip-if-running.js';
export * from './middleware/timeout.js';
export * from './middleware.js';
export * from './registry.js';
// scheduler
export * from './scheduler/scheduler.js';
// sharded fires
export * from './shards/index.js';
export * from './store.js';
export * from './trigger.js';
// triggers
export * from './triggers/at.js';
export * from './triggers/cron.js';
export * from './triggers/every.js';
export * from './validate.js';
