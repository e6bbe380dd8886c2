/**
 * PostgreSQL `text` cannot hold U+0000, while fleetcron keys and owners may be any JS string.
 * Strings are stored through a reversible escape: `\` becomes `\\` and U+0000 becomes `\0`.
 * Strings without either character (nearly all) are stored unchanged.
 */

const NEEDS_ESCAPE = /[\\\0]/;

/** Encodes `value` for a `text` column (see the module comment). */
export function encodeText(value: string): string {
  if (!NEEDS_ESCAPE.test(value)) return value;
  return value.replace(/[\\\0]/g, (c) => (c === '\\' ? '\\\\' : '\\0'));
}

/** Decodes a value written by {@link encodeText}. */
export function decodeText(stored: string): string {
  if (!stored.includes('\\')) return stored;
  return stored.replace(/\\(\\|0)/g, (_, c: string) => (c === '0' ? '\0' : '\\'));
}
