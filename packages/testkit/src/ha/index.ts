export * from './etcd-cluster.js';
export * from './postgres-replicated.js';
export * from './redis-sentinel.js';
export * from './stall-link.js';
