import { isFleetcronError } from '@fleetcron/core';
import { describe, expect, it } from 'vitest';
import { assertPrefix, DEFAULT_PREFIX, encodeKeyPart, resolvePrefix } from '../src/index.js';

/** The hash tag Redis Cluster hashes: the text between the first `{` and the next `}`. */
function hashTag(key: string): string {
  const open = key.indexOf('{');
  const close = key.indexOf('}', open + 1);
  return key.slice(open + 1, close);
}

describe('encodeKeyPart', () => {
  it('leaves ordinary names readable', () => {
    expect(encodeKeyPart('invoice-run')).toBe('invoice-run');
    expect(encodeKeyPart('ümlaut 🚀 job:1')).toBe('ümlaut 🚀 job:1');
  });

  it('escapes %, { and } so a name cannot end or split a hash tag', () => {
    expect(encodeKeyPart('a{b}c%d')).toBe('a%7Bb%7Dc%25d');
    const name = 'evil}{name';
    const key = `{fleetcron:${encodeKeyPart(name)}}:token`;
    expect(hashTag(key)).toBe(`fleetcron:${encodeKeyPart(name)}`);
  });

  it('escapes lone surrogates, keeps pairs', () => {
    expect(encodeKeyPart('\uD800x')).toBe('%uD800x');
    expect(encodeKeyPart('x\uDC00')).toBe('x%uDC00');
    expect(encodeKeyPart('\uD83D\uDE80')).toBe('\uD83D\uDE80');
  });

  it('is injective on tricky names', () => {
    const names = ['%', '%25', '{', '%7B', '}', '%7D', '\uD800', '%uD800', 'a', ''];
    expect(new Set(names.map(encodeKeyPart)).size).toBe(names.length);
  });
});

describe('prefix', () => {
  it('defaults to fleetcron', () => {
    expect(resolvePrefix(undefined)).toBe(DEFAULT_PREFIX);
    expect(resolvePrefix('app')).toBe('app');
  });

  it.each(['', 'a{b', 'a}b', 42, null])('rejects %j with a typed error', (prefix) => {
    let error: unknown;
    try {
      assertPrefix(prefix);
    } catch (e) {
      error = e;
    }
    expect(isFleetcronError(error, 'INVALID_OPTION')).toBe(true);
    expect((error as { field?: string }).field).toBe('prefix');
  });
});
