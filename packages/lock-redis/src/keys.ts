import { encodeKeyPart } from '@fleetcron/redis-shared';

/** The Redis keys that hold one job's lock state; all share the hash tag `{prefix:key}`. */
export interface LockKeys {
  /** Prefix of the per-fire claim record keys: `<fire><fireAt>` holds `outcome|token|owner`. */
  fire: string;
  /** Sorted set indexing the claim records: score and member `fireAt`. */
  fires: string;
  /** Hash of live leases: field `x` (exclusive) or `<fireAt>`, value `token|expiresAt|fireAt|owner`. */
  leases: string;
  /** String: the last fencing token issued for the key. Never expires. */
  token: string;
  /** String: the catch-up mark, the newest fire ever recorded for the key. Never expires. */
  mark: string;
}

/** The keys of job `key` under `prefix`: `{prefix:encodedKey}:f:<fireAt>|fires|leases|token|mark`. */
export function lockKeys(prefix: string, key: string): LockKeys {
  const tag = `{${prefix}:${encodeKeyPart(key)}}`;
  return {
    fire: `${tag}:f:`,
    fires: `${tag}:fires`,
    leases: `${tag}:leases`,
    token: `${tag}:token`,
    mark: `${tag}:mark`,
  };
}
