export * from './etcd-lock.js';
export * from './keys.js';
export * from './options.js';
