export * from './etcd-store.js';
export { StoreKeys } from './keys.js';
export { DEFAULT_MAX_HISTORY, type EtcdStoreOptions } from './options.js';
