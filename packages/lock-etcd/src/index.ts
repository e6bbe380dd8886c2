export * from './elector.js';
export * from './etcd-lock.js';
export { encodeFireAt, KeyLayout } from './keys.js';
export type { EtcdClockOptions, EtcdLockOptions } from './options.js';
