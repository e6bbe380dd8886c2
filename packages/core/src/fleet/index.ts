export * from './definition-hash.js';
export * from './drift.js';
export * from './fleet-client.js';
export * from './registered-job.js';
export * from './trigger-spec.js';
export * from './upcoming-fires.js';
export * from './version.js';
export * from './zoned-time.js';
