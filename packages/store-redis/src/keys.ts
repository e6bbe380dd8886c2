import { InvalidOptionError } from '@fleetcron/core';

/**
 * Escapes a string so it can sit inside a Redis Cluster hash tag: `%`, `{` and `}` become
 * `%25`, `%7B`, `%7D`, and a lone UTF-16 surrogate (which would not survive UTF-8 encoding)
 * becomes `%uXXXX`. Everything else stays readable. The mapping is injective (every escape
 * starts with `%`, and `%` itself is escaped), so two job names never share keys.
 * (Same encoding as `@fleetcron/lock-redis`.)
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

/** The Redis keys that hold one job's history and state; all share the hash tag `{prefix:job}`. */
export interface StoreKeys {
  /**
   * Sorted set, every score 0, member `<startedAt as 16 digits>:<id>`: lexicographic order is
   * exactly `(startedAt, id)` order, so newest-first pages and cursors are single range reads.
   */
  index: string;
  /** Hash: execution id → `<startedAt as 16 digits><execution as JSON>`. */
  executions: string;
  /** Hash: `paused`, `lastStatus`, `lastFireAt`, `lastFinishedAt`. Never expires. */
  state: string;
}

/** The keys of job `job` under `prefix`: `{prefix:encodedJob}:h|x|s`. */
export function storeKeys(prefix: string, job: string): StoreKeys {
  const tag = `{${prefix}:${encodeKeyPart(job)}}`;
  return { index: `${tag}:h`, executions: `${tag}:x`, state: `${tag}:s` };
}

/** The set of job names that have history (read by `prune`): `prefix:jobs`. */
export function registryKey(prefix: string): string {
  return `${prefix}:jobs`;
}

/** Largest `startedAt` the index can order: every safe integer has at most 16 digits. */
export const MAX_STARTED_AT = Number.MAX_SAFE_INTEGER;

/** `startedAt` as 16 zero-padded digits (the lexicographic sort key). */
export function padTime(ms: number): string {
  return String(ms).padStart(16, '0');
}

/** The index member of an execution. */
export function indexMember(startedAt: number, id: string): string {
  return `${padTime(startedAt)}:${id}`;
}
