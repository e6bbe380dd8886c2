export * from './fire-groups.js';
export * from './part-keys.js';
export * from './placement.js';
export * from './shard-info.js';
