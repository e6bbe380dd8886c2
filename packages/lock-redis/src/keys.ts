import { InvalidOptionError } from '@fleetcron/core';

/**
 * Escapes a string so it can sit inside a Redis Cluster hash tag: `%`, `{` and `}` become
 * `%25`, `%7B`, `%7D`, and a lone UTF-16 surrogate (which would not survive UTF-8 encoding)
 * becomes `%uXXXX`. Everything else stays readable. The mapping is injective (every escape
 * starts with `%`, and `%` itself is escaped), so two job names never share keys.
 */
export function encodeKeyPart(text: string): string {
  let out = '';
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code === 0x25) out += '%25';
    else if (code === 0x7b) out += '%7B';
    else if (code === 0x7d) out += '%7D';
    else if (code >= 0xd800 && code <= 0xdfff) {
      const next = text.charCodeAt(i + 1);
      if (code <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
        out += text.slice(i, i + 2);
        i++;
      } else {
        out += `%u${code.toString(16).toUpperCase()}`;
      }
    } else out += text[i];
  }
  return out;
}

/** Throws {@link InvalidOptionError} unless `prefix` is a non-empty string without `{` or `}`. */
export function assertPrefix(prefix: unknown): asserts prefix is string {
  if (typeof prefix !== 'string' || prefix.length === 0 || /[{}]/.test(prefix)) {
    throw new InvalidOptionError(
      'prefix',
      `must be a non-empty string without "{" or "}" (it goes inside a Redis Cluster hash tag), got ${JSON.stringify(prefix)}.`,
    );
  }
}

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
}

/** The keys of job `key` under `prefix`: `{prefix:encodedKey}:f:<fireAt>|fires|leases|token`. */
export function lockKeys(prefix: string, key: string): LockKeys {
  const tag = `{${prefix}:${encodeKeyPart(key)}}`;
  return {
    fire: `${tag}:f:`,
    fires: `${tag}:fires`,
    leases: `${tag}:leases`,
    token: `${tag}:token`,
  };
}
