import { encodeKeyPart } from '@fleetcron/redis-shared';

/** The Redis keys that hold one job's lock state; all share the hash tag `{prefix:key}`. */
export interface LockKeys {
  /** Prefix of the per-fire claim record keys: `<fire><fireAt>` holds `outcome|token|owner`. */
  fire: string;
  /** Sorted set indexing the claim records: score and member `fireAt`. */
  fires: string;
  /**
   * Hash of the job: `t` the last fencing token, `m` the catch-up mark, `x` / `<fireAt>` the
   * leases (`token|expiresAt|fireAt|owner`). Never expires.
   */
  job: string;
}

/** The characters {@link encodeKeyPart} escapes (`%`, `{`, `}`, UTF-16 surrogates). */
const ESCAPED = /[%{}\uD800-\uDFFF]/;

/** The keys of job `key` under `prefix`: `{prefix:encodedKey}:f:<fireAt>|fires|j`. */
export function lockKeys(prefix: string, key: string): LockKeys {
  // most names need no escape: skip encodeKeyPart's character-by-character copy for them
  const tag = `{${prefix}:${ESCAPED.test(key) ? encodeKeyPart(key) : key}}`;
  return { fire: `${tag}:f:`, fires: `${tag}:fires`, job: `${tag}:j` };
}
