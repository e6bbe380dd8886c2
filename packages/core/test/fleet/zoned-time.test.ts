import { describe, expect, it } from 'vitest';
import { wallClock, zonedTime } from '../../src/index.js';

const at = (iso: string) => Date.parse(iso);

describe('wallClock', () => {
  it('reads an instant in a zone as naive epoch ms, milliseconds kept', () => {
    const instant = at('2026-03-29T00:59:59.123Z');
    expect(new Date(wallClock(instant, 'Europe/Berlin')).toISOString()).toBe(
      '2026-03-29T01:59:59.123Z',
    );
    expect(new Date(wallClock(instant, 'UTC')).toISOString()).toBe('2026-03-29T00:59:59.123Z');
  });

  it('jumps with daylight saving time (Berlin, 29 March 2026: 02:00 becomes 03:00)', () => {
    expect(
      wallClock(at('2026-03-29T01:00:00Z'), 'Europe/Berlin') - at('2026-03-29T01:00:00Z'),
    ).toBe(2 * 3_600_000);
    expect(
      wallClock(at('2026-03-29T00:00:00Z'), 'Europe/Berlin') - at('2026-03-29T00:00:00Z'),
    ).toBe(3_600_000);
  });

  it('keeps years below 100 and instants before 1970', () => {
    const early = Date.UTC(50, 0, 1, 12); // Date.UTC reads 50 as 1950
    expect(new Date(wallClock(early, 'UTC')).getUTCFullYear()).toBe(1950);
    const year42 = new Date(0).setUTCFullYear(42, 5, 1);
    expect(new Date(wallClock(year42, 'UTC')).getUTCFullYear()).toBe(42);
    expect(new Date(wallClock(-1, 'UTC')).toISOString()).toBe('1969-12-31T23:59:59.999Z');
  });

  it('throws RangeError for a zone Intl does not know', () => {
    expect(() => wallClock(0, 'Mars/Olympus')).toThrow(RangeError);
  });
});

describe('zonedTime', () => {
  it('gives UTC text and local text with the offset of that instant', () => {
    expect(zonedTime(at('2026-03-29T01:00:00Z'), 'Europe/Berlin')).toEqual({
      at: at('2026-03-29T01:00:00Z'),
      utc: '2026-03-29T01:00:00.000Z',
      local: '2026-03-29 03:00:00 +02:00',
      zone: 'Europe/Berlin',
    });
    expect(zonedTime(at('2026-01-15T12:30:45.500Z'), 'America/St_Johns').local).toBe(
      '2026-01-15 09:00:45 -03:30',
    );
    expect(zonedTime(at('2026-06-01T00:00:00Z'), 'Asia/Kathmandu').local).toBe(
      '2026-06-01 05:45:00 +05:45',
    );
  });
});
