/**
 * PostgreSQL `text` cannot hold U+0000, while fleetcron keys, owners, job names, ids and error
 * text may be any JS string. A string with U+0000 (or one that starts with the marker U+FFFF, a
 * Unicode noncharacter) is stored as U+FFFF followed by the string with `\` doubled and U+0000
 * written as `\0`. Every other string, nearly all of them, is stored unchanged. The mapping is
 * one-to-one, so equality lookups and round trips are exact.
 */

const MARKER = '\uFFFF';

/** Encodes `value` for a `text` column (see the module comment). */
export function encodeText(value: string): string {
  if (!value.includes('\0') && !value.startsWith(MARKER)) return value;
  return MARKER + value.replace(/[\\\0]/g, (c) => (c === '\\' ? '\\\\' : '\\0'));
}

/** Decodes a value written by {@link encodeText}. */
export function decodeText(stored: string): string {
  if (!stored.startsWith(MARKER)) return stored;
  return stored.slice(1).replace(/\\(\\|0)/g, (_, c: string) => (c === '0' ? '\0' : '\\'));
}
