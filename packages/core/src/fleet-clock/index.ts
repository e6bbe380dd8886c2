export * from './fleet-clock.js';
export * from './offset-estimator.js';
