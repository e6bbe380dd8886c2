import { describe, expect, it } from 'vitest';
import { assertNoBidiControl, BIDI_CONTROL } from '../src/backend.js';
import { isFleetcronError } from '../src/index.js';

describe('assertNoBidiControl', () => {
  it('refuses every bidi control with its code point, index and the field', () => {
    const controls = [0x61c, 0x200e, 0x200f, 0x202a, 0x202b, 0x202c, 0x202d, 0x202e];
    controls.push(0x2066, 0x2067, 0x2068, 0x2069);
    for (const code of controls) {
      const name = `invoice-${String.fromCodePoint(code)}exe.fdp`;
      expect(BIDI_CONTROL.test(name)).toBe(true);
      let thrown: unknown;
      try {
        assertNoBidiControl('name', name);
      } catch (error) {
        thrown = error;
      }
      expect(isFleetcronError(thrown, 'INVALID_OPTION')).toBe(true);
      expect(thrown).toMatchObject({ field: 'name' });
      const hex = code.toString(16).toUpperCase().padStart(4, '0');
      expect((thrown as Error).message).toContain(`U+${hex} at index 8`);
    }
  });

  it('accepts right-to-left letters, emoji and other format-free text', () => {
    for (const name of ['فاتورة-شهرية', 'עבודה', 'billing 🧾', 'a\u200Db']) {
      expect(() => assertNoBidiControl('name', name)).not.toThrow();
    }
  });
});
