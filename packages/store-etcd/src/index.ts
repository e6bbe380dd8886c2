export * from './etcd-store.js';
export { StoreKeys } from './keys.js';
export {
  DEFAULT_ETCD_AUDIT_MAX_ENTRIES,
  DEFAULT_MAX_HISTORY,
  type EtcdStoreOptions,
} from './options.js';
