import { describe, expect, it } from 'vitest';
import { decodeText, encodeText } from '../src/index.js';
import { TRICKY } from './strings.js';

describe('encodeText / decodeText', () => {
  it('round-trips every string exactly', () => {
    for (const value of TRICKY) expect(decodeText(encodeText(value))).toBe(value);
  });

  it('leaves strings without U+0000 or a leading marker unchanged', () => {
    for (const value of ['plain job', 'back\\slash', 'ends with marker \uFFFF', 'emoji 🚀']) {
      expect(encodeText(value)).toBe(value);
    }
  });

  it('never writes U+0000, which PostgreSQL text cannot hold', () => {
    for (const value of TRICKY) expect(encodeText(value).includes('\0')).toBe(false);
  });

  it('is one-to-one: different strings never share an encoding', () => {
    const encoded = TRICKY.map(encodeText);
    expect(new Set(encoded).size).toBe(TRICKY.length);
  });
});
