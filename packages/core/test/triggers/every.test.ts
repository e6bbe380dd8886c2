import { describe, expect, it } from 'vitest';
import { isFleetcronError } from '../../src/errors.js';
import { every } from '../../src/triggers/every.js';
import { fires, thrown } from './helpers.js';

describe('every(ms, { anchor })', () => {
  it('fires on the epoch-aligned grid, strictly after the given time', () => {
    const t = every(60_000);
    expect(fires(t, '2026-01-01T00:00:30Z', 2)).toEqual([
      '2026-01-01T00:01:00.000Z',
      '2026-01-01T00:02:00.000Z',
    ]);
    expect(t.next(new Date('2026-01-01T00:01:00Z'))?.toISOString()).toBe(
      '2026-01-01T00:02:00.000Z',
    );
    expect(t.next(new Date('2026-01-01T00:00:59.999Z'))?.toISOString()).toBe(
      '2026-01-01T00:01:00.000Z',
    );
  });

  it('gives every instance the same fires, whenever it asks', () => {
    const a = every(7_000);
    const b = every(7_000);
    const fromA = fires(a, '2026-01-01T00:00:00.123Z', 5);
    const fromB = fires(b, '2026-01-01T00:00:03.999Z', 5);
    expect(fromA).toEqual(fromB);
    for (const f of fromA) expect(new Date(f).getTime() % 7_000).toBe(0);
  });

  it('aligns to an anchor (Date or epoch ms), before or after it', () => {
    const anchor = new Date('2026-01-01T00:00:10Z');
    const t = every(30_000, { anchor });
    expect(fires(t, '2026-01-01T00:00:00Z', 3)).toEqual([
      '2026-01-01T00:00:10.000Z',
      '2026-01-01T00:00:40.000Z',
      '2026-01-01T00:01:10.000Z',
    ]);
    // times before the anchor follow the same grid
    expect(t.next(new Date('2025-12-31T23:59:00Z'))?.toISOString()).toBe(
      '2025-12-31T23:59:10.000Z',
    );
    expect(every(30_000, { anchor: anchor.getTime() }).next(new Date(0))?.getTime()).toBe(
      t.next(new Date(0))?.getTime(),
    );
  });

  it('works before the epoch', () => {
    expect(every(1000).next(new Date(-1500))?.getTime()).toBe(-1000);
    expect(every(1000).next(new Date(-1000))?.getTime()).toBe(0);
  });

  it.each([0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, '1000' as unknown as number])(
    'rejects ms = %s with InvalidOptionError(every)',
    (ms) => {
      const error = thrown(() => every(ms));
      expect(isFleetcronError(error, 'INVALID_OPTION')).toBe(true);
      expect((error as { field: string }).field).toBe('every');
    },
  );

  it.each([new Date(Number.NaN), Number.NaN, 1.5, '0' as unknown as number])(
    'rejects anchor = %s with InvalidOptionError(anchor)',
    (anchor) => {
      const error = thrown(() => every(1000, { anchor }));
      expect(isFleetcronError(error, 'INVALID_OPTION')).toBe(true);
      expect((error as { field: string }).field).toBe('anchor');
    },
  );

  it('describes itself', () => {
    expect(every(5000).describe()).toBe('every(5000ms)');
    expect(every(5000, { anchor: 1000 }).describe()).toBe(
      'every(5000ms from 1970-01-01T00:00:01.000Z)',
    );
  });
});
